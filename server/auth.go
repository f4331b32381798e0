package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/internal/limiter"
	"github.com/wasmcp/wasmcp/protocol"
)

// AuthConfig is how HTTP clients authenticate (serve's --auth* and
// --per-principal-* flags; see package auth for each provider).
type AuthConfig struct {
	// Provider is "none" (loopback only), "jwt", "introspect", "apikey",
	// "basic" or "forward".
	Provider string
	// AllowUnauthenticated serves a non-loopback address with Provider
	// none (warned at every start).
	AllowUnauthenticated bool
	// Resource is the canonical resource URI (default: the scheme and
	// listen address, /mcp).
	Resource string
	// Scopes every request needs, and those published (default Scopes);
	// space- or comma-separated.
	Scopes, ScopesSupported string
	// jwt: the issuer, its JWKS URL (default from its metadata), the
	// algorithms allowed (comma-separated), the clock skew, the least time
	// between JWKS fetches, and whether any typ header passes.
	Issuer, JWKSURL, Algorithms string
	Leeway, JWKSMinRefresh      time.Duration
	JWTAllowAnyTyp              bool
	// DPoPRequired accepts only DPoP-bound tokens (jwt, introspect).
	DPoPRequired bool
	// introspect: the endpoint, this server's client id and the file of its
	// secret.
	IntrospectionURL, ClientID, ClientSecretFile string
	// apikey: the keys file and the header carrying the key.
	KeysFile, KeyHeader string
	// basic: the htpasswd file.
	Htpasswd string
	// forward: the endpoint, its timeout, how long an admission is
	// remembered, and the response headers naming principal and scopes.
	ForwardURL                      string
	ForwardTimeout, ForwardCacheTTL time.Duration
	ForwardPrincipal, ForwardScopes string
	// Per-principal caps on requests (0: none).
	PerPrincipalConcurrent, PerPrincipalPerMinute, PerPrincipalBurst int
	// AuditCalls logs one line per guest call.
	AuditCalls bool
	// Observer is told of refused requests (metrics); Run sets it.
	Observer auth.Observer

	// shared counts the per-principal caps across replicas (a Redis
	// store); nil counts them in this process.
	shared limiter.Limiter
}

func fields(s string) []string { return strings.Fields(strings.ReplaceAll(s, ",", " ")) }

// audit returns the call auditor, nil with --audit-calls=false.
func (f *AuthConfig) audit(log *slog.Logger) protocol.AuditFunc {
	if !f.AuditCalls {
		return nil
	}
	return auditCalls(log)
}

// check refuses --auth none on a non-loopback address unless
// --allow-unauthenticated, and then warns; it runs before listening.
func (f *AuthConfig) check(addr string, log *slog.Logger) error {
	if f.Provider != "none" && f.Provider != "" {
		return nil
	}
	if loopbackAddr(addr) {
		return nil
	}
	if !f.AllowUnauthenticated {
		return fmt.Errorf("--http %s is not a loopback address and --auth is none: anyone who can reach it could run the tools. "+
			"Add --auth jwt|introspect|apikey|basic|forward (see docs/network.md, \"Authentication\"), or --allow-unauthenticated to serve it without authentication anyway", addr)
	}
	log.Warn("serving a non-loopback address WITHOUT authentication (--allow-unauthenticated): anyone who can reach it can run the tools", "addr", addr)
	return nil
}

// wrap returns the middleware that authenticates the HTTP clients of a
// server listening on addr, nil for --auth none.
func (f *AuthConfig) wrap(addr string, tls bool, log *slog.Logger) (func(http.Handler) http.Handler, error) {
	if f.Provider == "none" || f.Provider == "" {
		return nil, nil
	}
	resource := f.Resource
	if resource == "" {
		scheme := "http"
		if tls {
			scheme = "https"
		}
		resource = scheme + "://" + addr + "/mcp"
		if !loopbackAddr(addr) {
			log.Warn("--auth-resource is not set: the resource URI is the listen address, which tokens' audience and remote clients rarely use; set it to the URL clients reach", "resource", resource)
		}
	}
	opts := auth.GuardOptions{Resource: resource, RequiredScopes: fields(f.Scopes), ScopesSupported: fields(f.ScopesSupported),
		ResourceName: "wasmcp", Logger: log, Observer: f.Observer,
		Limits: auth.Limits{Concurrent: f.PerPrincipalConcurrent, PerMinute: f.PerPrincipalPerMinute, Burst: f.PerPrincipalBurst, Shared: f.shared}}
	if len(opts.ScopesSupported) == 0 {
		opts.ScopesSupported = opts.RequiredScopes
	}
	if f.DPoPRequired && f.Provider != "jwt" && f.Provider != "introspect" {
		return nil, fmt.Errorf("--auth-dpop-required needs --auth jwt or introspect, not %s", f.Provider)
	}
	var err error
	switch f.Provider {
	case "jwt":
		if f.Issuer == "" {
			return nil, errors.New("--auth jwt needs --auth-issuer")
		}
		opts.AuthorizationServers = []string{f.Issuer}
		opts.Provider, err = auth.NewJWT(auth.JWTConfig{Issuer: f.Issuer, JWKSURL: f.JWKSURL, Audience: resource,
			Algorithms: fields(f.Algorithms), Leeway: f.Leeway, MinRefresh: f.JWKSMinRefresh, AllowAnyTyp: f.JWTAllowAnyTyp,
			DPoP: auth.DPoPConfig{Required: f.DPoPRequired}})
		if f.JWTAllowAnyTyp {
			log.Warn("--auth-jwt-allow-any-typ: JWTs whose typ is not at+jwt are accepted as access tokens (RFC 9068 §4 says refuse them)")
		}
	case "introspect":
		if f.IntrospectionURL == "" {
			return nil, errors.New("--auth introspect needs --auth-introspection-url")
		}
		if f.Issuer != "" {
			opts.AuthorizationServers = []string{f.Issuer}
		}
		var secret string
		if f.ClientSecretFile != "" {
			b, err := os.ReadFile(f.ClientSecretFile)
			if err != nil {
				return nil, fmt.Errorf("--auth-client-secret-file: %w", err)
			}
			secret = strings.TrimSpace(string(b))
		}
		opts.Provider, err = auth.NewIntrospection(auth.IntrospectionConfig{URL: f.IntrospectionURL, ClientID: f.ClientID,
			ClientSecret: secret, Audience: resource, Leeway: f.Leeway, DPoP: auth.DPoPConfig{Required: f.DPoPRequired}})
	case "apikey":
		if f.KeysFile == "" {
			return nil, errors.New("--auth apikey needs --auth-keys-file")
		}
		opts.Provider, err = auth.NewAPIKeys(auth.APIKeysConfig{File: f.KeysFile, Header: f.KeyHeader, Logger: log})
	case "basic":
		if f.Htpasswd == "" {
			return nil, errors.New("--auth basic needs --auth-htpasswd")
		}
		opts.Provider, err = auth.NewBasic(auth.BasicConfig{File: f.Htpasswd, Logger: log})
	case "forward":
		if f.ForwardURL == "" {
			return nil, errors.New("--auth forward needs --auth-forward-url")
		}
		opts.Provider, err = auth.NewForward(auth.ForwardConfig{URL: f.ForwardURL, Timeout: f.ForwardTimeout, CacheTTL: f.ForwardCacheTTL,
			PrincipalHeader: f.ForwardPrincipal, ScopesHeader: f.ForwardScopes})
	default:
		return nil, fmt.Errorf("--auth %q: want none, jwt, introspect, apikey, basic or forward", f.Provider)
	}
	if err != nil {
		return nil, err
	}
	g0, err := auth.NewGuard(http.NotFoundHandler(), opts)
	if err != nil {
		return nil, fmt.Errorf("--auth-resource: %w", err)
	}
	log.Info("authenticating HTTP clients", "auth", f.Provider, "resource", resource, "metadata", g0.MetadataURL())
	return func(next http.Handler) http.Handler {
		g, _ := auth.NewGuard(next, opts)
		return g
	}, nil
}
