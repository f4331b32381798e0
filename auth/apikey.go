package auth

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// APIKeysConfig configures an APIKeys provider.
type APIKeysConfig struct {
	// File holds one key a line: "NAME sha256:HEX [SCOPE...]", where HEX
	// is the SHA-256 of the key (printf %s "$KEY" | sha256sum); blank
	// lines and lines starting with # are ignored. A name may have several
	// keys. The file is read again when it changes.
	File string
	// Header carries the key; "" or "Authorization" means
	// "Authorization: Bearer KEY", any other name the key as the whole
	// header value.
	Header string
	// Reload is the least time between two looks at the file; 0 means 1 s.
	Reload time.Duration
	// Logger reports reloads and files that do not parse.
	Logger *slog.Logger
}

// APIKeys is a Provider of static keys, stored hashed.
type APIKeys struct {
	header string
	keys   *reloading[[]apiKey]
}

type apiKey struct {
	hash   [32]byte
	name   string
	scopes []string
}

// NewAPIKeys reads the keys file.
func NewAPIKeys(cfg APIKeysConfig) (*APIKeys, error) {
	h := cfg.Header
	if strings.EqualFold(h, "Authorization") {
		h = ""
	}
	keys, err := newReloading(cfg.File, cfg.Reload, cfg.Logger, parseAPIKeys)
	if err != nil {
		return nil, err
	}
	return &APIKeys{header: http.CanonicalHeaderKey(h), keys: keys}, nil
}

func parseAPIKeys(b []byte) ([]apiKey, error) {
	var out []apiKey
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("line %d: want NAME sha256:HEX [SCOPE...]", n)
		}
		hexd, ok := strings.CutPrefix(f[1], "sha256:")
		raw, err := hex.DecodeString(hexd)
		if !ok || err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("line %d: the key must be sha256: and 64 hex digits (the SHA-256 of the key, never the key)", n)
		}
		k := apiKey{name: f[0], scopes: f[2:]}
		copy(k.hash[:], raw)
		out = append(out, k)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Scheme is "Bearer".
func (a *APIKeys) Scheme() string { return "Bearer" }

// Authenticate looks up the key of r. Every stored key is compared, in
// constant time, whatever matched.
func (a *APIKeys) Authenticate(r *http.Request) (*Principal, error) {
	var key string
	if a.header == "" {
		k, err := bearerToken(r.Header.Get("Authorization"))
		if err != nil {
			return nil, err
		}
		key = k
	} else {
		key = r.Header.Get(a.header)
		if key == "" {
			return nil, errMissing
		}
		if len(key) > MaxCredentialBytes {
			return nil, invalid("the key is too long", nil)
		}
	}
	sum := sha256.Sum256([]byte(key))
	var found *apiKey
	keys, err := a.keys.get()
	if err != nil {
		return nil, err
	}
	for i := range keys {
		if subtle.ConstantTimeCompare(sum[:], keys[i].hash[:]) == 1 {
			found = &keys[i]
		}
	}
	if found == nil {
		return nil, invalid("unknown key", nil)
	}
	return &Principal{Name: found.name, Scopes: found.scopes}, nil
}
