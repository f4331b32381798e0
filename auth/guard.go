package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MetadataPath is where the Protected Resource Metadata (RFC 9728) is
// served; the resource's path is appended for the path-suffixed form.
const MetadataPath = "/.well-known/oauth-protected-resource"

// GuardOptions configure a Guard.
type GuardOptions struct {
	// Provider authenticates requests. Required.
	Provider Provider
	// Resource is this server's canonical resource URI, as clients reach
	// it: "https://mcp.example.com/mcp". Required.
	Resource string
	// AuthorizationServers are the issuers clients get tokens from,
	// published in the metadata (empty for providers without one).
	AuthorizationServers []string
	// ScopesSupported are published in the metadata and, when
	// RequiredScopes is empty, in 401 challenges.
	ScopesSupported []string
	// RequiredScopes must all be held by a principal; one without them
	// gets 403 insufficient_scope naming them.
	RequiredScopes []string
	// ResourceName is the human-readable name in the metadata.
	ResourceName string
	// Limits cap each principal's requests.
	Limits Limits
	// Logger receives the audit lines; nil means slog.Default().
	Logger *slog.Logger
	// Observer, if set, is told of every refused request (metrics).
	Observer Observer
}

// Observer is told of the requests a Guard refuses, by provider
// (ProviderName) and reason (one of the Reason* constants): a fixed set of
// labels, never a principal or a credential.
type Observer interface {
	AuthRefused(provider, reason string)
}

// The reasons a Guard refuses a request (Observer.AuthRefused).
const (
	// ReasonMissing: the request carried no credentials (401, no error code).
	ReasonMissing = "missing"
	// ReasonMalformed: the credentials are malformed, or sent where they
	// are not accepted (400 invalid_request).
	ReasonMalformed = "malformed"
	// ReasonInvalid: the credentials were checked and refused: unknown,
	// expired, not for this resource, bad signature (401 invalid_token).
	ReasonInvalid = "invalid"
	// ReasonForbidden: authenticated, but a required scope is missing or
	// the authentication service forbids it (403 insufficient_scope).
	ReasonForbidden = "forbidden"
	// ReasonUpstream: the authorization server, introspection endpoint or
	// authentication service could not be asked (502, 503).
	ReasonUpstream = "upstream"
	// ReasonLimited: a per-principal cap refused the request (429).
	ReasonLimited = "limited"
)

// reasons lists every reason a Guard reports.
func reasons() []string {
	return []string{ReasonMissing, ReasonMalformed, ReasonInvalid, ReasonForbidden, ReasonUpstream, ReasonLimited}
}

// reason is the Observer reason of a refusal.
func reason(e *Error) string {
	switch {
	case e.Status >= 500:
		return ReasonUpstream
	case e.Code == CodeInvalidRequest || e.Status == http.StatusBadRequest:
		return ReasonMalformed
	case e.Code == CodeInsufficientScope || e.Status == http.StatusForbidden:
		return ReasonForbidden
	case e.Code == "":
		return ReasonMissing
	default:
		return ReasonInvalid
	}
}

// ProviderName names a provider for metrics: jwt, introspect, apikey,
// basic, forward, or "other" for a provider of another package.
func ProviderName(p Provider) string {
	switch p.(type) {
	case *JWT:
		return "jwt"
	case *Introspection:
		return "introspect"
	case *APIKeys:
		return "apikey"
	case *Basic:
		return "basic"
	case *Forward:
		return "forward"
	default:
		return "other"
	}
}

// Guard is an http.Handler that authenticates requests before the handler
// it wraps sees them, and serves the Protected Resource Metadata.
type Guard struct {
	next        http.Handler
	opts        GuardOptions
	log         *slog.Logger
	metaPaths   map[string]bool
	metaURL     string // the path-suffixed metadata URL named in challenges
	metadata    []byte
	challengeSc string // the scope of 401 challenges
	limits      *principalCaps
	provider    string // ProviderName of opts.Provider
	dpop        *dpop  // the provider's DPoP checks, nil for providers without
}

// dpopProvider is a provider that checks DPoP proofs (JWT, Introspection).
type dpopProvider interface {
	dpopChecks() *dpop
	// authenticateProof authenticates without recording the request's
	// DPoP proof, which it returns (nil for none).
	authenticateProof(r *http.Request) (*Principal, *verified, error)
}

// NewGuard wraps next.
func NewGuard(next http.Handler, opts GuardOptions) (*Guard, error) {
	if opts.Provider == nil {
		return nil, fmt.Errorf("auth: a Guard needs a provider")
	}
	u, err := url.Parse(opts.Resource)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("auth: resource %q: want an absolute http(s) URI without query or fragment", opts.Resource)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	g := &Guard{next: next, opts: opts, log: opts.Logger,
		metaPaths: map[string]bool{MetadataPath: true, MetadataPath + path: true},
		metaURL:   u.Scheme + "://" + u.Host + MetadataPath + path,
		limits:    newLimiter(opts.Limits, opts.Logger),
		provider:  ProviderName(opts.Provider),
	}
	md := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers,omitempty"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name,omitempty"`
		DPoPAlgs               []string `json:"dpop_signing_alg_values_supported,omitempty"`
		DPoPRequired           bool     `json:"dpop_bound_access_tokens_required,omitempty"`
	}{Resource: opts.Resource, AuthorizationServers: opts.AuthorizationServers, ScopesSupported: opts.ScopesSupported,
		BearerMethodsSupported: []string{"header"}, ResourceName: opts.ResourceName}
	if dp, ok := opts.Provider.(dpopProvider); ok && dp.dpopChecks() != nil {
		g.dpop = dp.dpopChecks()
		md.DPoPAlgs = strings.Fields(g.dpop.algNames)
		md.DPoPRequired = g.dpop.required
	}
	g.metadata, _ = json.Marshal(md)
	sc := opts.RequiredScopes
	if len(sc) == 0 {
		sc = opts.ScopesSupported
	}
	g.challengeSc = strings.Join(sc, " ")
	return g, nil
}

// MetadataURL returns the URL of the Protected Resource Metadata named in
// the challenges.
func (g *Guard) MetadataURL() string { return g.metaURL }

// ServeHTTP serves the metadata, or authenticates r and passes it on with
// its Principal in the context.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.metaPaths[r.URL.Path] {
		g.serveMetadata(w, r)
		return
	}
	// CORS preflights carry no credentials; the handler answers them.
	if r.Method == http.MethodOptions {
		g.next.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	if r.URL.RawQuery != "" && r.URL.Query().Has("access_token") {
		g.refuse(w, r, &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Description: "access tokens are accepted only in the Authorization header"}, start)
		return
	}
	if len(r.Header.Values("Authorization")) > 1 {
		// Which one counts would depend on who reads: refused.
		g.refuse(w, r, &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Description: "more than one Authorization header"}, start)
		return
	}
	p, proof, err := g.authenticate(r)
	if err != nil {
		g.refuse(w, r, asError(err), start)
		return
	}
	if miss := p.missing(g.opts.RequiredScopes); len(miss) > 0 {
		g.refuse(w, r, &Error{Status: http.StatusForbidden, Code: CodeInsufficientScope,
			Description: "the token lacks a required scope", Scope: g.opts.RequiredScopes, dpop: g.dpop != nil && usesDPoP(r)}, start)
		return
	}
	if r.Method == http.MethodPost {
		release, cap, retry := g.limits.acquire(r.Context(), p.Name)
		if release == nil {
			g.tooMany(w, r, p, cap, retry)
			return
		}
		defer release()
	}
	// The proof is remembered only now, for a request let through: a
	// refused one (scope, cap) fills nobody's replay cache.
	if proof != nil {
		if err := g.dpop.record(p, proof); err != nil {
			g.refuse(w, r, asError(err), start)
			return
		}
	}
	ctx := context.WithValue(WithPrincipal(r.Context(), p), guardKey{}, guardRef{g: g, dpop: g.dpop != nil && usesDPoP(r)})
	g.next.ServeHTTP(w, r.WithContext(ctx))
}

// authenticate asks the provider for r's principal and, for a DPoP
// provider, the proof to record once the request is let through.
func (g *Guard) authenticate(r *http.Request) (*Principal, *verified, error) {
	if dp, ok := g.opts.Provider.(dpopProvider); ok && g.dpop != nil {
		return dp.authenticateProof(r)
	}
	p, err := g.opts.Provider.Authenticate(r)
	return p, nil, err
}

func (g *Guard) serveMetadata(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version, Content-Type, Authorization, DPoP")
	h.Set("Access-Control-Max-Age", "86400")
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet, http.MethodHead:
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "max-age=3600")
		h.Set("Content-Length", strconv.Itoa(len(g.metadata)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(g.metadata)
		}
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// refuse answers a failed authentication or authorization and writes its
// audit line.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, e *Error, start time.Time) {
	attrs := []any{"audit", "auth", "outcome", "refused", "status", e.Status, "remote", remoteIP(r),
		"method", r.Method, "path", r.URL.Path, "reason", e.Description, "duration", time.Since(start)}
	if e.Code != "" {
		attrs = append(attrs, "error", e.Code)
	}
	if e.cause != nil {
		attrs = append(attrs, "cause", e.cause.Error())
	}
	if g.opts.Observer != nil {
		g.opts.Observer.AuthRefused(g.provider, reason(e))
	}
	if e.Status >= 500 {
		g.log.Error("authentication failed", attrs...)
	} else {
		g.log.Warn("authentication failed", attrs...)
	}
	scheme := g.opts.Provider.Scheme()
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || strings.HasPrefix(scheme, "Bearer") {
		w.Header().Set("WWW-Authenticate", g.challenge(scheme, e))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	body := map[string]string{"error_description": e.Description}
	if e.Code != "" {
		body["error"] = e.Code
	}
	_ = json.NewEncoder(w).Encode(body)
}

// challenge builds the WWW-Authenticate value (RFC 6750 §3, RFC 9728 §5.1;
// RFC 9449 §7.1 for DPoP: when the request used DPoP, needs it, or DPoP
// is required and no credentials came).
func (g *Guard) challenge(scheme string, e *Error) string {
	if !strings.HasPrefix(scheme, "Bearer") {
		return scheme
	}
	dpop := g.dpop != nil && (e.dpop || g.dpop.required && e.Code == "")
	var b strings.Builder
	if dpop {
		b.WriteString("DPoP ")
	} else {
		b.WriteString("Bearer ")
	}
	b.WriteString(`resource_metadata="`)
	b.WriteString(g.metaURL)
	b.WriteByte('"')
	scope := g.challengeSc
	if len(e.Scope) > 0 {
		scope = strings.Join(e.Scope, " ")
	}
	if scope != "" {
		fmt.Fprintf(&b, `, scope="%s"`, quoteSafe(scope))
	}
	if dpop {
		fmt.Fprintf(&b, `, algs="%s"`, g.dpop.algNames)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, `, error="%s", error_description="%s"`, e.Code, quoteSafe(e.Description))
	}
	return b.String()
}

// usesDPoP reports whether r's Authorization header uses the DPoP scheme.
func usesDPoP(r *http.Request) bool {
	scheme, _, ok := ParseAuthorization(r.Header.Get("Authorization"))
	return ok && scheme == "dpop"
}

// quoteSafe drops the characters a quoted-string in a challenge cannot
// hold as they are (RFC 6750 restricts error_description and scope to
// printable ASCII without '"' and '\').
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, s)
}

func (g *Guard) tooMany(w http.ResponseWriter, r *http.Request, p *Principal, cap string, retry time.Duration) {
	secs := int((retry + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	if g.opts.Observer != nil {
		g.opts.Observer.AuthRefused(g.provider, ReasonLimited)
	}
	g.log.Warn("request refused by a per-principal cap", "audit", "limit", "principal", p.Name, "cap", cap,
		"retry_after_s", secs, "method", r.Method, "path", r.URL.Path)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	msg := fmt.Sprintf("Too many requests: the %s cap of this principal is reached; retry after %d s", cap, secs)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32000, "message": msg, "data": map[string]any{"cap": cap, "retryAfterSeconds": secs}}})
	_, _ = w.Write(b)
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// guardKey carries, in the context of a request a Guard let through, that
// Guard (for StepUpChallenge).
type guardKey struct{}

type guardRef struct {
	g    *Guard
	dpop bool // the request used the DPoP scheme
}

// StepUpChallenge returns the WWW-Authenticate value of a 403
// insufficient_scope answer (RFC 6750 §3.1, MCP step-up authorization)
// for a request a Guard let through whose call needs one of scopes, and
// counts and logs the refusal as the Guard's own; "" when ctx is not such
// a request's. The request's caller is authenticated; only a token with
// one of scopes (which the client may ask its authorization server for)
// would be allowed.
func StepUpChallenge(ctx context.Context, scopes []string) (challenge string) {
	ref, ok := ctx.Value(guardKey{}).(guardRef)
	if !ok {
		return ""
	}
	g := ref.g
	if g.opts.Observer != nil {
		g.opts.Observer.AuthRefused(g.provider, ReasonForbidden)
	}
	g.log.Warn("authorization refused", "audit", "auth", "outcome", "refused", "status", http.StatusForbidden,
		"error", CodeInsufficientScope, "scopes", strings.Join(scopes, " "))
	return g.challenge(g.opts.Provider.Scheme(), &Error{Status: http.StatusForbidden, Code: CodeInsufficientScope,
		Description: "the call needs a scope the token lacks", Scope: scopes, dpop: ref.dpop})
}
