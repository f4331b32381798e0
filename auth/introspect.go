package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// IntrospectionConfig configures an Introspection provider.
type IntrospectionConfig struct {
	// URL is the authorization server's introspection endpoint (RFC 7662).
	URL string
	// ClientID and ClientSecret authenticate this resource server to it
	// (HTTP Basic).
	ClientID, ClientSecret string
	// Audience is this server's canonical resource URI; an active token's
	// aud must contain it: an answer without aud (or with an empty one) is
	// refused, since nothing says the token was issued for this resource.
	Audience string
	// CacheTTL is how long an active token's answer is remembered (never
	// past the token's exp); 0 means 30 s.
	CacheTTL time.Duration
	// MaxTokenBytes refuses longer tokens; 0 means 8 KiB.
	MaxTokenBytes int
	// Client asks the endpoint; nil means a client with a 10 s timeout.
	Client *http.Client
	// DPoP configures the checks of DPoP-bound tokens (RFC 9449): an
	// answer with cnf.jkt binds the token to that key.
	DPoP DPoPConfig
	// Leeway is the clock skew allowed on a DPoP proof's iat; 0 means 30 s.
	Leeway time.Duration
}

// Introspection is a Provider of opaque bearer tokens, asked about at the
// authorization server's introspection endpoint and cached briefly.
type Introspection struct {
	cfg   IntrospectionConfig
	cache *tokenCache
	dpop  *dpop
}

// NewIntrospection returns an Introspection provider.
func NewIntrospection(cfg IntrospectionConfig) (*Introspection, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("auth: introspection URL %q: want an http(s) URL", cfg.URL)
	}
	if cfg.Audience == "" {
		return nil, errors.New("auth: introspection needs the audience (this server's resource URI)")
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = 30 * time.Second
	}
	if cfg.MaxTokenBytes <= 0 {
		cfg.MaxTokenBytes = 8 << 10
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = 30 * time.Second
	}
	d, err := newDPoP(cfg.DPoP, cfg.Audience, cfg.Leeway, nil)
	if err != nil {
		return nil, err
	}
	return &Introspection{cfg: cfg, cache: newTokenCache(0, nil), dpop: d}, nil
}

// authenticateProof is Authenticate leaving the DPoP proof unrecorded
// (Guard records it once the request passed its caps).
func (in *Introspection) authenticateProof(r *http.Request) (*Principal, *verified, error) {
	return in.dpop.authenticateProof(r, func(tok string) (*Principal, error) { return in.introspect(r, tok) })
}

func (in *Introspection) dpopChecks() *dpop { return in.dpop }

// Scheme is "Bearer".
func (in *Introspection) Scheme() string { return "Bearer" }

// Authenticate introspects the access token of r: a bearer token, or a
// DPoP-bound one with its DPoP proof (RFC 9449).
func (in *Introspection) Authenticate(r *http.Request) (*Principal, error) {
	return in.dpop.authenticate(r, func(tok string) (*Principal, error) { return in.introspect(r, tok) })
}

// introspect asks about tok (or remembers the answer).
func (in *Introspection) introspect(r *http.Request, tok string) (*Principal, error) {
	if len(tok) > in.cfg.MaxTokenBytes {
		return nil, invalid(fmt.Sprintf("the token is longer than %d bytes", in.cfg.MaxTokenBytes), nil)
	}
	key := digest(tok)
	if p := in.cache.get(key); p != nil {
		return p, nil
	}
	form := url.Values{"token": {tok}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, in.cfg.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, &Error{Status: http.StatusBadGateway, Description: "the introspection endpoint cannot be asked", cause: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in.cfg.ClientID != "" {
		req.SetBasicAuth(url.QueryEscape(in.cfg.ClientID), url.QueryEscape(in.cfg.ClientSecret))
	}
	resp, err := in.cfg.Client.Do(req)
	if err != nil {
		return nil, &Error{Status: http.StatusBadGateway, Description: "the introspection endpoint cannot be reached", cause: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{Status: http.StatusBadGateway, Description: "the introspection endpoint failed", cause: fmt.Errorf("status %s", resp.Status)}
	}
	var ans struct {
		Active   bool            `json:"active"`
		Sub      string          `json:"sub"`
		ClientID string          `json:"client_id"`
		Scope    string          `json:"scope"`
		Exp      int64           `json:"exp"`
		Nbf      int64           `json:"nbf"`
		Aud      json.RawMessage `json:"aud"`
		Cnf      cnfClaim        `json:"cnf"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBytes)).Decode(&ans); err != nil {
		return nil, &Error{Status: http.StatusBadGateway, Description: "the introspection endpoint answered no JSON", cause: err}
	}
	now := time.Now()
	switch {
	case !ans.Active:
		return nil, invalid("the token is not active", nil)
	case ans.Exp != 0 && now.Unix() >= ans.Exp:
		return nil, invalid("the token has expired", nil)
	case ans.Nbf != 0 && now.Unix() < ans.Nbf:
		return nil, invalid("the token is not valid yet", nil)
	case !audienceHas(ans.Aud, in.cfg.Audience):
		return nil, invalid("the token is not for this resource", nil)
	}
	name := ans.Sub
	if name == "" {
		name = ans.ClientID
	}
	if name == "" {
		return nil, invalid("the token names no subject", nil)
	}
	p := &Principal{Name: name, Scopes: strings.Fields(ans.Scope)}
	p.jkt, p.otherCnf = ans.Cnf.binding()
	exp := now.Add(in.cfg.CacheTTL)
	if ans.Exp != 0 && time.Unix(ans.Exp, 0).Before(exp) {
		exp = time.Unix(ans.Exp, 0)
	}
	in.cache.put(key, p, exp)
	return p, nil
}

// audienceHas reports whether an aud claim (a string or an array of
// strings) names want.
func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, a := range many {
			if a == want {
				return true
			}
		}
	}
	return false
}
