package auth

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"
	"unsafe"
)

// Provider authenticates requests.
type Provider interface {
	// Authenticate returns the principal of r, or an *Error: errors with
	// an empty Code mean r carried no credentials the provider reads.
	Authenticate(r *http.Request) (*Principal, error)
	// Scheme is the authentication scheme of the challenge sent with a
	// 401: "Bearer" or "Basic".
	Scheme() string
}

// tokenCache remembers validated credentials by their SHA-256 digest
// until an expiry, so a repeated credential is not verified again. It
// holds at most max entries; when full it drops the expired ones, then
// an arbitrary eighth.
type tokenCache struct {
	mu  sync.RWMutex
	m   map[[32]byte]cached
	max int
	now func() time.Time
}

type cached struct {
	p   *Principal
	exp time.Time
}

func newTokenCache(max int, now func() time.Time) *tokenCache {
	if max <= 0 {
		max = 10000
	}
	if now == nil {
		now = time.Now
	}
	return &tokenCache{m: map[[32]byte]cached{}, max: max, now: now}
}

func digest(parts ...string) [32]byte {
	if len(parts) == 1 {
		// Hashed in place: sha256 reads the bytes and keeps none, so the
		// token is not copied on every request.
		return sha256.Sum256(unsafe.Slice(unsafe.StringData(parts[0]), len(parts[0])))
	}
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

func (c *tokenCache) get(k [32]byte) *Principal {
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || !c.now().Before(e.exp) {
		return nil
	}
	return e.p
}

func (c *tokenCache) put(k [32]byte, p *Principal, exp time.Time) {
	now := c.now()
	if !now.Before(exp) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for k, e := range c.m {
			if !now.Before(e.exp) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < c.max-c.max/8 {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[k] = cached{p: p, exp: exp}
}

func (c *tokenCache) clear() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}
