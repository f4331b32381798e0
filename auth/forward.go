package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ForwardConfig configures a Forward provider.
type ForwardConfig struct {
	// URL is the operator's endpoint. Each request is asked about with a
	// GET carrying the original headers plus X-Forwarded-Method,
	// X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-Uri (Traefik's
	// ForwardAuth) and X-Original-Method, X-Original-URI (nginx's
	// auth_request); no body. A 2xx admits, 401 and 403 refuse, anything
	// else (or no answer in time) fails closed with 502.
	URL string
	// PrincipalHeader is the response header naming the principal; ""
	// means X-Auth-Principal. A 2xx without it is refused.
	PrincipalHeader string
	// ScopesHeader is the response header listing the scopes, separated
	// by spaces or commas; "" means X-Auth-Scopes.
	ScopesHeader string
	// Timeout bounds one question; 0 means 5 s.
	Timeout time.Duration
	// CacheTTL is how long an answer is remembered, keyed by the digest of
	// the request's credential headers (CacheKeyHeaders); 0 means 30 s,
	// negative disables the cache. Refusals are not cached.
	CacheTTL time.Duration
	// CacheKeyHeaders are the headers an answer depends on; empty means
	// Authorization and Cookie. A request with none of them is not cached.
	CacheKeyHeaders []string
	// CacheSize bounds the cache; 0 means 10000 answers.
	CacheSize int
	// Client asks the endpoint; nil means a client without redirects.
	Client *http.Client
}

// Forward is a Provider that delegates each decision to an HTTP endpoint.
type Forward struct {
	cfg   ForwardConfig
	cache *tokenCache
}

// hopHeaders are not forwarded.
var hopHeaders = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Content-Length": true,
	"Content-Type": true, "Content-Encoding": true, "Expect": true}

// NewForward returns a Forward provider.
func NewForward(cfg ForwardConfig) (*Forward, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("auth: forward-auth URL %q: want an http(s) URL", cfg.URL)
	}
	if cfg.PrincipalHeader == "" {
		cfg.PrincipalHeader = "X-Auth-Principal"
	}
	if cfg.ScopesHeader == "" {
		cfg.ScopesHeader = "X-Auth-Scopes"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = 30 * time.Second
	}
	if len(cfg.CacheKeyHeaders) == 0 {
		cfg.CacheKeyHeaders = []string{"Authorization", "Cookie"}
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Forward{cfg: cfg, cache: newTokenCache(cfg.CacheSize, nil)}, nil
}

// Scheme is "Bearer".
func (f *Forward) Scheme() string { return "Bearer" }

// Authenticate asks the endpoint about r.
func (f *Forward) Authenticate(r *http.Request) (*Principal, error) {
	var key [32]byte
	cacheable := false
	if f.cfg.CacheTTL > 0 {
		parts := make([]string, 0, len(f.cfg.CacheKeyHeaders))
		for _, h := range f.cfg.CacheKeyHeaders {
			v := strings.Join(r.Header.Values(h), "\n")
			cacheable = cacheable || v != ""
			parts = append(parts, v)
		}
		if cacheable {
			key = digest(parts...)
			if p := f.cache.get(key); p != nil {
				return p, nil
			}
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.cfg.URL, nil)
	if err != nil {
		return nil, &Error{Status: http.StatusBadGateway, Description: "the authentication service cannot be asked", cause: err}
	}
	for k, vs := range r.Header {
		if !hopHeaders[k] {
			req.Header[k] = vs
		}
	}
	proto := "http"
	if r.TLS != nil {
		proto = "https"
	}
	uri := r.URL.RequestURI()
	req.Header.Set("X-Forwarded-Method", r.Method)
	req.Header.Set("X-Forwarded-Proto", proto)
	req.Header.Set("X-Forwarded-Host", r.Host)
	req.Header.Set("X-Forwarded-Uri", uri)
	req.Header.Set("X-Original-Method", r.Method)
	req.Header.Set("X-Original-URI", uri)
	if host := r.RemoteAddr; host != "" {
		if i := strings.LastIndexByte(host, ':'); i > 0 {
			host = host[:i]
		}
		req.Header.Set("X-Forwarded-For", strings.Trim(host, "[]"))
	}
	resp, err := f.cfg.Client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &Error{Status: http.StatusBadGateway, Description: "the authentication service did not answer in time", cause: err}
		}
		return nil, &Error{Status: http.StatusBadGateway, Description: "the authentication service cannot be reached", cause: err}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		if r.Header.Get("Authorization") == "" {
			return nil, errMissing
		}
		return nil, invalid("refused by the authentication service", nil)
	case resp.StatusCode == http.StatusForbidden:
		return nil, &Error{Status: http.StatusForbidden, Code: CodeInsufficientScope, Description: "forbidden by the authentication service"}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, &Error{Status: http.StatusBadGateway, Description: "the authentication service failed", cause: fmt.Errorf("status %s", resp.Status)}
	}
	name := resp.Header.Get(f.cfg.PrincipalHeader)
	if name == "" {
		return nil, &Error{Status: http.StatusBadGateway, Description: "the authentication service admitted without naming the principal",
			cause: fmt.Errorf("no %s header in its answer", f.cfg.PrincipalHeader)}
	}
	p := &Principal{Name: name, Scopes: strings.Fields(strings.ReplaceAll(resp.Header.Get(f.cfg.ScopesHeader), ",", " "))}
	if cacheable {
		f.cache.put(key, p, time.Now().Add(f.cfg.CacheTTL))
	}
	return p, nil
}
