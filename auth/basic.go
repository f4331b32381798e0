package auth

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// BasicConfig configures a Basic provider.
type BasicConfig struct {
	// File is htpasswd-style: "USER:BCRYPT-HASH[:SCOPE SCOPE...]" a line
	// (htpasswd -B writes the first two fields); blank lines and lines
	// starting with # are ignored. It is read again when it changes.
	File string
	// Realm is the realm of the challenge; "" means "wasmcp".
	Realm string
	// CacheTTL is how long a verified user:password pair is remembered
	// (by its digest) so that bcrypt does not run on every request; 0
	// means 1 min, negative disables the cache.
	CacheTTL time.Duration
	// Reload is the least time between two looks at the file; 0 means 1 s.
	Reload time.Duration
	// Logger reports reloads and files that do not parse.
	Logger *slog.Logger
}

// Basic is a Provider of users with bcrypt-hashed passwords (RFC 7617).
type Basic struct {
	realm string
	ttl   time.Duration
	users *reloading[htpasswd]
	cache *tokenCache
	slots chan struct{} // bounds the bcrypt comparisons running at once
}

type htpasswd struct {
	users map[string]basicUser
	dummy []byte // a hash of a random password at the file's cost
}

type basicUser struct {
	hash   []byte
	scopes []string
}

// NewBasic reads the password file.
func NewBasic(cfg BasicConfig) (*Basic, error) {
	if cfg.Realm == "" {
		cfg.Realm = "wasmcp"
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = time.Minute
	}
	b := &Basic{realm: cfg.Realm, ttl: cfg.CacheTTL, cache: newTokenCache(0, nil),
		slots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))}
	users, err := newReloading(cfg.File, cfg.Reload, cfg.Logger, parseHtpasswd)
	if err != nil {
		return nil, err
	}
	users.onReload = b.cache.clear
	b.users = users
	return b, nil
}

func parseHtpasswd(b []byte) (htpasswd, error) {
	h := htpasswd{users: map[string]basicUser{}}
	cost := bcrypt.DefaultCost
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.SplitN(line, ":", 3)
		if len(f) < 2 || f[0] == "" {
			return h, fmt.Errorf("line %d: want USER:HASH[:SCOPES]", n)
		}
		c, err := bcrypt.Cost([]byte(f[1]))
		if err != nil {
			return h, fmt.Errorf("line %d: user %q: only bcrypt hashes are accepted (htpasswd -B): %v", n, f[0], err)
		}
		if _, dup := h.users[f[0]]; dup {
			return h, fmt.Errorf("line %d: user %q appears twice", n, f[0])
		}
		cost = max(cost, c)
		u := basicUser{hash: []byte(f[1])}
		if len(f) == 3 {
			u.scopes = strings.Fields(strings.ReplaceAll(f[2], ",", " "))
		}
		h.users[f[0]] = u
	}
	if err := sc.Err(); err != nil {
		return h, err
	}
	pw := make([]byte, 18)
	_, _ = rand.Read(pw)
	d, err := bcrypt.GenerateFromPassword(pw, cost)
	if err != nil {
		return h, err
	}
	h.dummy = d
	return h, nil
}

// Scheme is "Basic".
func (b *Basic) Scheme() string { return `Basic realm="` + b.realm + `", charset="UTF-8"` }

// Authenticate checks the user and password of r. An unknown user costs
// the same bcrypt comparison as a known one.
func (b *Basic) Authenticate(r *http.Request) (*Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errMissing
	}
	scheme, cred, ok := ParseAuthorization(h)
	if !ok {
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Description: "malformed Authorization header"}
	}
	if scheme != "basic" {
		return nil, errMissing
	}
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Description: "malformed Basic credentials"}
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Description: "malformed Basic credentials"}
	}
	// The file first: while it cannot be used, no credential, cached or
	// not, is accepted.
	users, err := b.users.get()
	if err != nil {
		return nil, err
	}
	key := digest(user, pass)
	if b.ttl > 0 {
		if p := b.cache.get(key); p != nil {
			return p, nil
		}
	}
	u, known := users.users[user]
	hash := users.dummy
	if known {
		hash = u.hash
	}
	select {
	case b.slots <- struct{}{}:
	case <-r.Context().Done():
		return nil, invalid("request canceled", r.Context().Err())
	}
	err = bcrypt.CompareHashAndPassword(hash, []byte(pass))
	<-b.slots
	if err != nil || !known {
		if err != nil && !errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
			return nil, invalid("invalid user or password", err)
		}
		return nil, invalid("invalid user or password", nil)
	}
	p := &Principal{Name: user, Scopes: u.scopes}
	if b.ttl > 0 {
		b.cache.put(key, p, time.Now().Add(b.ttl))
	}
	return p, nil
}
