package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxMetadataBytes bounds an issuer's metadata document and its JWKS.
const maxMetadataBytes = 1 << 20

// keySet is an issuer's signing keys, fetched from its JWKS and fetched
// again when a token names an unknown kid or the set is older than
// maxAge, but never more often than once per minRefresh.
type keySet struct {
	issuer     string
	jwksURL    string // "" until discovered
	client     *http.Client
	minRefresh time.Duration
	maxAge     time.Duration
	now        func() time.Time

	fetchMu sync.Mutex // serializes fetches
	mu      sync.RWMutex
	keys    []jose.JSONWebKey
	fetched time.Time // last successful fetch
	tried   time.Time // last attempt
	lastErr error
}

// lookup returns the keys usable for a token signed with alg and naming
// kid ("" for any), and when the set they come from was fetched. It
// fetches the set when it is empty or stale, or when kid is unknown and
// the floor allows.
func (s *keySet) lookup(ctx context.Context, kid, alg string) ([]any, time.Time, error) {
	s.mu.RLock()
	keys, fetched := s.keys, s.fetched
	s.mu.RUnlock()
	now := s.now()
	found := match(keys, kid, alg)
	stale := fetched.IsZero() || now.Sub(fetched) > s.maxAge
	if len(found) > 0 && !stale {
		return found, fetched, nil
	}
	if err := s.refresh(ctx, fetched); err != nil && len(found) == 0 {
		return nil, time.Time{}, err
	}
	s.mu.RLock()
	keys, fetched = s.keys, s.fetched
	s.mu.RUnlock()
	if found = match(keys, kid, alg); len(found) == 0 {
		if kid != "" {
			return nil, time.Time{}, invalid("the token's signing key is unknown", fmt.Errorf("kid %q not in the issuer's JWKS", kid))
		}
		return nil, time.Time{}, invalid("no key of the issuer verifies the token", nil)
	}
	return found, fetched, nil
}

// refreshed fetches the set again after a signature did not verify with
// keys fetched at seen, when the floor allows (an issuer may replace a
// key under the same kid), and reports whether a newer set than seen is
// now held, so the caller verifies once more.
func (s *keySet) refreshed(ctx context.Context, seen time.Time) bool {
	if seen.IsZero() {
		return false
	}
	_ = s.refresh(ctx, seen)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fetched.After(seen)
}

// refresh fetches the set unless another fetch succeeded since seen or an
// attempt was made less than minRefresh ago.
func (s *keySet) refresh(ctx context.Context, seen time.Time) error {
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	s.mu.RLock()
	fetched, tried, lastErr := s.fetched, s.tried, s.lastErr
	s.mu.RUnlock()
	if fetched.After(seen) {
		return nil
	}
	now := s.now()
	if !tried.IsZero() && now.Sub(tried) < s.minRefresh {
		if lastErr != nil {
			return lastErr
		}
		return nil
	}
	keys, err := s.fetch(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tried = now
	s.lastErr = err
	if err != nil {
		return err
	}
	s.keys, s.fetched = keys, now
	return nil
}

func (s *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if s.jwksURL == "" {
		u, err := discoverJWKS(ctx, s.client, s.issuer)
		if err != nil {
			return nil, &Error{Status: http.StatusServiceUnavailable, Description: "the authorization server's metadata cannot be read", cause: err}
		}
		s.jwksURL = u
	}
	var set jose.JSONWebKeySet
	if err := getJSON(ctx, s.client, s.jwksURL, &set); err != nil {
		return nil, &Error{Status: http.StatusServiceUnavailable, Description: "the authorization server's keys cannot be read", cause: err}
	}
	var keys []jose.JSONWebKey
	for _, k := range set.Keys {
		// Only public signing keys: a symmetric or private key in a JWKS
		// is never used to verify.
		if !k.Valid() || !k.IsPublic() || k.Use == "enc" {
			continue
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// match returns the keys with kid (any when kid is "") whose alg (when
// the key names one) is alg.
func match(keys []jose.JSONWebKey, kid, alg string) []any {
	var out []any
	for i := range keys {
		k := &keys[i]
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		out = append(out, k.Key)
	}
	return out
}

// discoverJWKS reads the issuer's authorization server metadata (RFC 8414,
// then OpenID Connect Discovery) and returns its jwks_uri.
func discoverJWKS(ctx context.Context, c *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("issuer %q is not a URL", issuer)
	}
	path := strings.TrimSuffix(u.Path, "/")
	candidates := []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration",
	}
	var errs []error
	for _, c0 := range candidates {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := getJSON(ctx, c, c0, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		if md.Issuer != issuer {
			errs = append(errs, fmt.Errorf("%s names issuer %q, want %q", c0, md.Issuer, issuer))
			continue
		}
		if md.JWKSURI == "" {
			errs = append(errs, fmt.Errorf("%s has no jwks_uri", c0))
			continue
		}
		return md.JWKSURI, nil
	}
	return "", errors.Join(errs...)
}

func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(b) > maxMetadataBytes {
		return fmt.Errorf("GET %s: larger than %d bytes", u, maxMetadataBytes)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}
