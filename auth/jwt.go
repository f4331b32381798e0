package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultAlgorithms are the signature algorithms JWT accepts by default:
// asymmetric ones only, so no token can be signed with a public key.
var defaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// DefaultAlgorithms returns the signature algorithms JWT accepts when
// JWTConfig.Algorithms is empty.
func DefaultAlgorithms() []string { return slices.Clone(defaultAlgorithms) }

// JWTConfig configures a JWT provider.
type JWTConfig struct {
	// Issuer is the authorization server; a token's iss must equal it.
	// Required.
	Issuer string
	// JWKSURL is where the issuer's keys are; "" means the jwks_uri of
	// the issuer's metadata (RFC 8414, then OpenID Connect Discovery).
	JWKSURL string
	// Audience is this server's canonical resource URI (RFC 8707); a
	// token's aud must contain it. Required.
	Audience string
	// Algorithms is the allow-list of signature algorithms; empty means
	// DefaultAlgorithms. "none" and the HMAC algorithms are refused.
	Algorithms []string
	// Leeway is the clock skew allowed on exp, nbf and iat; 0 means 30 s.
	Leeway time.Duration
	// MinRefresh is the floor between two fetches of the JWKS; 0 means
	// 30 s. A token naming an unknown kid triggers a fetch only when the
	// floor allows.
	MinRefresh time.Duration
	// MaxAge is how long a fetched JWKS is used before it is fetched
	// again; 0 means 1 h.
	MaxAge time.Duration
	// CacheSize bounds the validated-token cache; 0 means 10000.
	CacheSize int
	// MaxTokenBytes refuses longer tokens before parsing; 0 means 8 KiB.
	MaxTokenBytes int
	// HTTPClient fetches metadata and keys; nil means a client with a 10 s
	// timeout.
	HTTPClient *http.Client
	// AllowAnyTyp accepts tokens whatever their typ header. By default a
	// token's typ must be at+jwt or application/at+jwt (RFC 9068 §4), so
	// no other JWT the issuer signs (an ID token, a logout token) passes
	// for an access token; set it only for an issuer that cannot set typ.
	AllowAnyTyp bool
	// DPoP configures the checks of DPoP-bound tokens (RFC 9449).
	DPoP DPoPConfig
	// Now is the clock; nil means time.Now (tests set it).
	Now func() time.Time
}

// JWT is a Provider that validates JWT access tokens (RFC 9068) locally
// against the issuer's keys.
type JWT struct {
	cfg    JWTConfig
	keys   *keySet
	cache  *tokenCache
	parser *jwt.Parser
	dpop   *dpop
}

// NewJWT returns a JWT provider. It does not contact the issuer: keys are
// fetched on the first token.
func NewJWT(cfg JWTConfig) (*JWT, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("auth: JWT needs the issuer")
	}
	if cfg.Audience == "" {
		return nil, errors.New("auth: JWT needs the audience (this server's resource URI)")
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = DefaultAlgorithms()
	}
	for _, a := range cfg.Algorithms {
		if !slices.Contains(defaultAlgorithms, a) {
			return nil, fmt.Errorf("auth: algorithm %q is not allowed (want some of %s)", a, strings.Join(defaultAlgorithms, ", "))
		}
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.MinRefresh <= 0 {
		cfg.MinRefresh = 30 * time.Second
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = time.Hour
	}
	if cfg.MaxTokenBytes <= 0 {
		cfg.MaxTokenBytes = 8 << 10
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	j := &JWT{cfg: cfg,
		keys: &keySet{issuer: cfg.Issuer, jwksURL: cfg.JWKSURL, client: cfg.HTTPClient,
			minRefresh: cfg.MinRefresh, maxAge: cfg.MaxAge, now: cfg.Now},
		cache: newTokenCache(cfg.CacheSize, cfg.Now),
		parser: jwt.NewParser(
			jwt.WithValidMethods(cfg.Algorithms),
			jwt.WithIssuer(cfg.Issuer),
			jwt.WithAudience(cfg.Audience),
			jwt.WithLeeway(cfg.Leeway),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithTimeFunc(cfg.Now),
		),
	}
	d, err := newDPoP(cfg.DPoP, cfg.Audience, cfg.Leeway, cfg.Now)
	if err != nil {
		return nil, err
	}
	j.dpop = d
	return j, nil
}

// Scheme is "Bearer".
func (j *JWT) Scheme() string { return "Bearer" }

// Authenticate validates the access token of r: a bearer token, or a
// DPoP-bound one with its DPoP proof (RFC 9449).
func (j *JWT) Authenticate(r *http.Request) (*Principal, error) {
	return j.dpop.authenticate(r, func(tok string) (*Principal, error) { return j.Validate(r.Context(), tok) })
}

// authenticateProof is Authenticate leaving the DPoP proof unrecorded
// (Guard records it once the request passed its caps).
func (j *JWT) authenticateProof(r *http.Request) (*Principal, *verified, error) {
	return j.dpop.authenticateProof(r, func(tok string) (*Principal, error) { return j.Validate(r.Context(), tok) })
}

func (j *JWT) dpopChecks() *dpop { return j.dpop }

// accessClaims are the claims of an access token read besides the
// registered ones.
type accessClaims struct {
	jwt.RegisteredClaims
	Scope    string   `json:"scope"`
	Scp      []string `json:"scp"`
	ClientID string   `json:"client_id"`
	Cnf      cnfClaim `json:"cnf"`
}

// Validate validates one access token and returns its principal (a
// DPoP-bound token's principal is refused by Authenticate unless a proof
// of its key comes with it). A token
// validated before (by its SHA-256 digest) is not verified again until it
// expires.
func (j *JWT) Validate(ctx context.Context, tok string) (*Principal, error) {
	if len(tok) > j.cfg.MaxTokenBytes {
		return nil, invalid(fmt.Sprintf("the token is longer than %d bytes", j.cfg.MaxTokenBytes), nil)
	}
	key := digest(tok)
	if p := j.cache.get(key); p != nil {
		return p, nil
	}
	claims, seen, err := j.parse(ctx, tok)
	if errors.Is(err, jwt.ErrTokenSignatureInvalid) && j.keys.refreshed(ctx, seen) {
		// The key under that kid may have been replaced: verify once
		// more against the set fetched just now.
		claims, _, err = j.parse(ctx, tok)
	}
	if err != nil {
		return nil, err
	}
	name := claims.Subject
	if name == "" {
		name = claims.ClientID
	}
	if name == "" {
		return nil, invalid("the token names no subject", nil)
	}
	p := &Principal{Name: name, Scopes: strings.Fields(claims.Scope)}
	if len(p.Scopes) == 0 {
		p.Scopes = claims.Scp
	}
	p.jkt, p.otherCnf = claims.Cnf.binding()
	j.cache.put(key, p, claims.ExpiresAt.Time)
	return p, nil
}

// parse verifies tok and its claims; seen is when the key set that
// verified (or failed to verify) its signature was fetched, zero when no
// key was found.
func (j *JWT) parse(ctx context.Context, tok string) (claims *accessClaims, seen time.Time, err error) {
	claims = &accessClaims{}
	var lookupErr error
	_, err = j.parser.ParseWithClaims(tok, claims, func(t *jwt.Token) (any, error) {
		if !j.cfg.AllowAnyTyp && !isAccessTokenTyp(t.Header["typ"]) {
			lookupErr = invalid("the token is not a JWT access token: its typ is not at+jwt (RFC 9068)", nil)
			return nil, lookupErr
		}
		kid, _ := t.Header["kid"].(string)
		keys, fetched, err := j.keys.lookup(ctx, kid, t.Method.Alg())
		if err != nil {
			lookupErr = err
			return nil, err
		}
		seen = fetched
		if len(keys) == 1 {
			return keys[0], nil
		}
		set := jwt.VerificationKeySet{}
		for _, k := range keys {
			set.Keys = append(set.Keys, k)
		}
		return set, nil
	})
	if err != nil {
		if lookupErr != nil {
			return nil, seen, asError(lookupErr)
		}
		return nil, seen, &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Description: describe(err), cause: err}
	}
	return claims, seen, nil
}

// isAccessTokenTyp reports whether a typ header is at+jwt, with or
// without the application/ prefix, compared case-insensitively as media
// types are (RFC 9068 §2.1, RFC 7515 §4.1.9).
func isAccessTokenTyp(v any) bool {
	typ, _ := v.(string)
	if len(typ) > len("application/") && strings.EqualFold(typ[:len("application/")], "application/") {
		typ = typ[len("application/"):]
	}
	return strings.EqualFold(typ, "at+jwt")
}

// describe names what was wrong with a token, for the client.
func describe(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the token is malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "the token's signature is invalid or its algorithm not allowed"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token is not for this resource"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the token is from another issuer"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "the token lacks a required claim"
	}
	return "the token is invalid"
}
