package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/internal/limiter"
	"github.com/wasmcp/wasmcp/protocol"
)

// authFlags are serve's flags for authenticating HTTP clients.
type authFlags struct {
	// observer, set by serve, is told of refused requests (metrics); not
	// a flag.
	observer          auth.Observer
	provider          string
	allowUnauth       bool
	resource          string
	scopes            string
	scopesSupported   string
	issuer            string
	jwksURL           string
	algorithms        string
	leeway            time.Duration
	jwksMinRefresh    time.Duration
	jwtAllowAnyTyp    bool
	dpopRequired      bool
	keysFile          string
	keyHeader         string
	htpasswd          string
	forwardURL        string
	forwardTimeout    time.Duration
	forwardCacheTTL   time.Duration
	forwardPrincipal  string
	forwardScopes     string
	perPrincipalConc  int
	perPrincipalRate  int
	perPrincipalBurst int
	auditCalls        bool
	introspectURL     string
	clientID          string
	clientSecretFile  string
	// shared counts the per-principal caps across replicas (--store
	// redis); nil counts them in this process.
	shared limiter.Limiter
}

func (f *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.provider, "auth", "none", `how HTTP clients authenticate: "none" (loopback only), "jwt" (OAuth 2.1 bearer access tokens), "introspect" (opaque OAuth tokens, RFC 7662), "apikey", "basic" or "forward"`)
	fs.BoolVar(&f.allowUnauth, "allow-unauthenticated", false, "serve a non-loopback address with --auth none (logged as a warning at every start)")
	fs.StringVar(&f.resource, "auth-resource", "", "this server's canonical resource URI as clients reach it, e.g. https://mcp.example.com/mcp (default: the scheme and listen address, /mcp); JWT audiences must name it")
	fs.StringVar(&f.scopes, "auth-scopes", "", "space- or comma-separated scopes every request needs (403 insufficient_scope without them)")
	fs.StringVar(&f.scopesSupported, "auth-scopes-supported", "", "scopes published in the protected resource metadata (default: --auth-scopes)")
	fs.StringVar(&f.issuer, "auth-issuer", "", "jwt: the authorization server's issuer identifier; tokens' iss must equal it and its metadata names the JWKS")
	fs.StringVar(&f.jwksURL, "auth-jwks-url", "", "jwt: the issuer's JWKS URL (default: jwks_uri from the issuer's metadata)")
	fs.StringVar(&f.algorithms, "auth-algorithms", "", "jwt: comma-separated signature algorithms allowed (default "+strings.Join(auth.DefaultAlgorithms(), ",")+")")
	fs.DurationVar(&f.leeway, "auth-leeway", 30*time.Second, "jwt: clock skew allowed on exp, nbf and iat")
	fs.DurationVar(&f.jwksMinRefresh, "auth-jwks-min-refresh", 30*time.Second, "jwt: least time between two fetches of the JWKS (a token naming an unknown key triggers one)")
	fs.BoolVar(&f.jwtAllowAnyTyp, "auth-jwt-allow-any-typ", false, "jwt: accept access tokens whatever their typ header (default: only typ at+jwt, RFC 9068 §4); only for an issuer that cannot set it, since any other JWT it signs for this audience then passes for an access token")
	fs.BoolVar(&f.dpopRequired, "auth-dpop-required", false, "jwt, introspect: accept only DPoP-bound access tokens presented with a DPoP proof (RFC 9449; published as dpop_bound_access_tokens_required); without it, DPoP-bound tokens need their proof and unbound bearer tokens are accepted")
	fs.StringVar(&f.introspectURL, "auth-introspection-url", "", "introspect: the authorization server's token introspection endpoint (RFC 7662)")
	fs.StringVar(&f.clientID, "auth-client-id", "", "introspect: this server's client id at the introspection endpoint")
	fs.StringVar(&f.clientSecretFile, "auth-client-secret-file", "", "introspect: file holding this server's client secret")
	fs.StringVar(&f.keysFile, "auth-keys-file", "", `apikey: file of "NAME sha256:HEX [SCOPE...]" lines (HEX: printf %s "$KEY" | sha256sum); reloaded on change`)
	fs.StringVar(&f.keyHeader, "auth-key-header", "Authorization", `apikey: header carrying the key ("Authorization" means "Authorization: Bearer KEY")`)
	fs.StringVar(&f.htpasswd, "auth-htpasswd", "", "basic: htpasswd file of bcrypt hashes (htpasswd -B), USER:HASH[:SCOPES]; reloaded on change")
	fs.StringVar(&f.forwardURL, "auth-forward-url", "", "forward: the endpoint asked about each request (nginx auth_request / Traefik ForwardAuth convention)")
	fs.DurationVar(&f.forwardTimeout, "auth-forward-timeout", 5*time.Second, "forward: longest wait for the endpoint")
	fs.DurationVar(&f.forwardCacheTTL, "auth-forward-cache-ttl", 30*time.Second, "forward: how long an admission is remembered per credentials (negative: never)")
	fs.StringVar(&f.forwardPrincipal, "auth-forward-principal-header", "X-Auth-Principal", "forward: response header naming the principal")
	fs.StringVar(&f.forwardScopes, "auth-forward-scopes-header", "X-Auth-Scopes", "forward: response header listing the principal's scopes")
	fs.IntVar(&f.perPrincipalConc, "per-principal-concurrent", 0, "requests (POST) one principal may have in flight; 0: no cap")
	fs.IntVar(&f.perPrincipalRate, "per-principal-per-minute", 0, "requests (POST) one principal may make per minute (token bucket); 0: no cap")
	fs.IntVar(&f.perPrincipalBurst, "per-principal-burst", 0, "size of that token bucket (default: the per-minute rate)")
	fs.BoolVar(&f.auditCalls, "audit-calls", true, "log one line per guest call (principal, module, method, name, outcome, duration; never arguments)")
}

func fields(s string) []string { return strings.Fields(strings.ReplaceAll(s, ",", " ")) }

// audit returns the call auditor, nil with --audit-calls=false.
func (f *authFlags) audit(log *slog.Logger) protocol.AuditFunc {
	if !f.auditCalls {
		return nil
	}
	return auditCalls(log)
}

// check refuses --auth none on a non-loopback address unless
// --allow-unauthenticated, and then warns; it runs before listening.
func (f *authFlags) check(addr string, log *slog.Logger) error {
	if f.provider != "none" && f.provider != "" {
		return nil
	}
	if loopbackAddr(addr) {
		return nil
	}
	if !f.allowUnauth {
		return fmt.Errorf("--http %s is not a loopback address and --auth is none: anyone who can reach it could run the tools. "+
			"Add --auth jwt|introspect|apikey|basic|forward (see docs/network.md, \"Authentication\"), or --allow-unauthenticated to serve it without authentication anyway", addr)
	}
	log.Warn("serving a non-loopback address WITHOUT authentication (--allow-unauthenticated): anyone who can reach it can run the tools", "addr", addr)
	return nil
}

// wrap returns the middleware that authenticates the HTTP clients of a
// server listening on addr, nil for --auth none.
func (f *authFlags) wrap(addr string, tls bool, log *slog.Logger) (func(http.Handler) http.Handler, error) {
	if f.provider == "none" || f.provider == "" {
		return nil, nil
	}
	resource := f.resource
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
	opts := auth.GuardOptions{Resource: resource, RequiredScopes: fields(f.scopes), ScopesSupported: fields(f.scopesSupported),
		ResourceName: "wasmcp", Logger: log, Observer: f.observer,
		Limits: auth.Limits{Concurrent: f.perPrincipalConc, PerMinute: f.perPrincipalRate, Burst: f.perPrincipalBurst, Shared: f.shared}}
	if len(opts.ScopesSupported) == 0 {
		opts.ScopesSupported = opts.RequiredScopes
	}
	if f.dpopRequired && f.provider != "jwt" && f.provider != "introspect" {
		return nil, fmt.Errorf("--auth-dpop-required needs --auth jwt or introspect, not %s", f.provider)
	}
	var err error
	switch f.provider {
	case "jwt":
		if f.issuer == "" {
			return nil, errors.New("--auth jwt needs --auth-issuer")
		}
		opts.AuthorizationServers = []string{f.issuer}
		opts.Provider, err = auth.NewJWT(auth.JWTConfig{Issuer: f.issuer, JWKSURL: f.jwksURL, Audience: resource,
			Algorithms: fields(f.algorithms), Leeway: f.leeway, MinRefresh: f.jwksMinRefresh, AllowAnyTyp: f.jwtAllowAnyTyp,
			DPoP: auth.DPoPConfig{Required: f.dpopRequired}})
		if f.jwtAllowAnyTyp {
			log.Warn("--auth-jwt-allow-any-typ: JWTs whose typ is not at+jwt are accepted as access tokens (RFC 9068 §4 says refuse them)")
		}
	case "introspect":
		if f.introspectURL == "" {
			return nil, errors.New("--auth introspect needs --auth-introspection-url")
		}
		if f.issuer != "" {
			opts.AuthorizationServers = []string{f.issuer}
		}
		var secret string
		if f.clientSecretFile != "" {
			b, err := os.ReadFile(f.clientSecretFile)
			if err != nil {
				return nil, fmt.Errorf("--auth-client-secret-file: %w", err)
			}
			secret = strings.TrimSpace(string(b))
		}
		opts.Provider, err = auth.NewIntrospection(auth.IntrospectionConfig{URL: f.introspectURL, ClientID: f.clientID,
			ClientSecret: secret, Audience: resource, Leeway: f.leeway, DPoP: auth.DPoPConfig{Required: f.dpopRequired}})
	case "apikey":
		if f.keysFile == "" {
			return nil, errors.New("--auth apikey needs --auth-keys-file")
		}
		opts.Provider, err = auth.NewAPIKeys(auth.APIKeysConfig{File: f.keysFile, Header: f.keyHeader, Logger: log})
	case "basic":
		if f.htpasswd == "" {
			return nil, errors.New("--auth basic needs --auth-htpasswd")
		}
		opts.Provider, err = auth.NewBasic(auth.BasicConfig{File: f.htpasswd, Logger: log})
	case "forward":
		if f.forwardURL == "" {
			return nil, errors.New("--auth forward needs --auth-forward-url")
		}
		opts.Provider, err = auth.NewForward(auth.ForwardConfig{URL: f.forwardURL, Timeout: f.forwardTimeout, CacheTTL: f.forwardCacheTTL,
			PrincipalHeader: f.forwardPrincipal, ScopesHeader: f.forwardScopes})
	default:
		return nil, fmt.Errorf("--auth %q: want none, jwt, introspect, apikey, basic or forward", f.provider)
	}
	if err != nil {
		return nil, err
	}
	g0, err := auth.NewGuard(http.NotFoundHandler(), opts)
	if err != nil {
		return nil, fmt.Errorf("--auth-resource: %w", err)
	}
	log.Info("authenticating HTTP clients", "auth", f.provider, "resource", resource, "metadata", g0.MetadataURL())
	return func(next http.Handler) http.Handler {
		g, _ := auth.NewGuard(next, opts)
		return g
	}, nil
}

// loopbackAddr reports whether addr ("host:port") binds only a loopback
// address.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
