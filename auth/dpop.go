package auth

import (
	"crypto"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// CodeInvalidDPoPProof is the error code of a refused DPoP proof (RFC 9449
// §7.1).
const CodeInvalidDPoPProof = "invalid_dpop_proof"

// defaultDPoPAlgorithms are the proof signature algorithms accepted by
// default: asymmetric ones only (RFC 9449 §4.2 forbids MACs and none).
var defaultDPoPAlgorithms = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// DefaultDPoPAlgorithms returns the DPoP proof algorithms accepted when
// DPoPConfig.Algorithms is empty.
func DefaultDPoPAlgorithms() []string { return slices.Clone(defaultDPoPAlgorithms) }

// DPoPConfig configures the DPoP (RFC 9449) checks of the JWT and
// Introspection providers. The zero value accepts DPoP-bound tokens with
// valid proofs and plain bearer tokens that are not bound.
type DPoPConfig struct {
	// Required refuses every token not presented with a DPoP proof
	// (published as dpop_bound_access_tokens_required).
	Required bool
	// Algorithms are the proof signature algorithms accepted; empty means
	// DefaultDPoPAlgorithms. Only asymmetric algorithms are allowed.
	Algorithms []string
	// MaxAge is how old a proof's iat may be; 0 means 60 s. Proofs are
	// remembered (by key and jti) for MaxAge plus twice the leeway, so a
	// proof is used once; a proof issued before the server started is
	// refused (nothing before it is remembered).
	MaxAge time.Duration
	// ReplayCacheSize bounds the proofs remembered; 0 means 100000.
	// ReplayCachePerPrincipal bounds one principal's; 0 means a tenth of
	// ReplayCacheSize. A principal over its bound, or the one holding the
	// most when the cache is full, forgets its oldest proofs and refuses
	// its own proofs issued no later than those (never forgetting a jti
	// that could be replayed); other principals are not refused.
	ReplayCacheSize         int
	ReplayCachePerPrincipal int
}

// maxProofBytes bounds a DPoP header before it is parsed.
const maxProofBytes = 8 << 10

// dpop checks DPoP proofs for one resource.
type dpop struct {
	required bool
	algs     []jose.SignatureAlgorithm
	algNames string // space-separated, for challenges and metadata
	maxAge   time.Duration
	leeway   time.Duration
	origin   string // scheme://host[:port] of the resource, normalized
	now      func() time.Time
	seen     *replayCache
}

func newDPoP(cfg DPoPConfig, resource string, leeway time.Duration, now func() time.Time) (*dpop, error) {
	names := cfg.Algorithms
	if len(names) == 0 {
		names = defaultDPoPAlgorithms
	}
	d := &dpop{required: cfg.Required, maxAge: cfg.MaxAge, leeway: leeway, now: now}
	for _, a := range names {
		if !slices.Contains(defaultDPoPAlgorithms, a) {
			return nil, fmt.Errorf("auth: DPoP algorithm %q is not allowed (want some of %s)", a, strings.Join(defaultDPoPAlgorithms, ", "))
		}
		d.algs = append(d.algs, jose.SignatureAlgorithm(a))
	}
	d.algNames = strings.Join(names, " ")
	if d.maxAge <= 0 {
		d.maxAge = 60 * time.Second
	}
	if d.now == nil {
		d.now = time.Now
	}
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("auth: resource %q is not an absolute URL", resource)
	}
	d.origin = normalOrigin(u)
	d.seen = newReplayCache(cfg.ReplayCacheSize, cfg.ReplayCachePerPrincipal, d.maxAge+2*d.leeway, d.now())
	return d, nil
}

// normalOrigin is u's scheme and host, lower-cased, without a default
// port.
func normalOrigin(u *url.URL) string {
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if scheme == "http" {
		host = strings.TrimSuffix(host, ":80")
	} else if scheme == "https" {
		host = strings.TrimSuffix(host, ":443")
	}
	return scheme + "://" + host
}

// normalHTU is a URL as a proof's htu is compared (RFC 9449 §4.3): without
// query and fragment, scheme and host lower-cased, the default port and
// dot segments dropped, an empty path as "/".
func normalHTU(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.User != nil {
		return "", false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if strings.Contains(p, "/.") {
		p = u.ResolveReference(&url.URL{}).EscapedPath()
	}
	return normalOrigin(u) + p, true
}

// proofError is a refused proof: 401 invalid_dpop_proof with a DPoP
// challenge.
func proofError(desc string, cause error) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidDPoPProof, Description: desc, cause: cause, dpop: true}
}

// dpopClaims are the claims of a proof (RFC 9449 §4.2).
type dpopClaims struct {
	JTI   string          `json:"jti"`
	HTM   string          `json:"htm"`
	HTU   string          `json:"htu"`
	IAT   json.Number     `json:"iat"`
	ATH   string          `json:"ath"`
	Nonce json.RawMessage `json:"nonce"`
}

// verified is a proof whose signature and claims were checked, not yet
// matched with the token nor recorded.
type verified struct {
	jkt string // base64url RFC 7638 SHA-256 thumbprint of the proof key
	jti [32]byte
	iat time.Time
}

// check verifies the DPoP proof of r for the access token tok: exactly
// one DPoP header, typ dpop+jwt, an allowed asymmetric alg, a public jwk
// that verifies the signature, htm and htu naming this request, iat
// within the window, ath the token's hash.
func (d *dpop) check(r *http.Request, tok string) (*verified, error) {
	vals := r.Header.Values("DPoP")
	switch {
	case len(vals) == 0:
		return nil, proofError("the DPoP proof is missing (a DPoP header is required with Authorization: DPoP)", nil)
	case len(vals) > 1:
		return nil, proofError("more than one DPoP header", nil)
	case len(vals[0]) > maxProofBytes:
		return nil, proofError(fmt.Sprintf("the DPoP proof is longer than %d bytes", maxProofBytes), nil)
	}
	jws, err := jose.ParseSignedCompact(vals[0], d.algs)
	if err != nil {
		return nil, proofError("the DPoP proof is not a JWS signed with an allowed algorithm ("+d.algNames+")", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, proofError("the DPoP proof must have one signature", nil)
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, "dpop+jwt") {
		return nil, proofError("the DPoP proof's typ is not dpop+jwt", nil)
	}
	k := h.JSONWebKey
	if k == nil || !k.Valid() {
		return nil, proofError("the DPoP proof has no jwk header", nil)
	}
	if !k.IsPublic() {
		return nil, proofError("the DPoP proof's jwk is not a public asymmetric key", nil)
	}
	payload, err := jws.Verify(k)
	if err != nil {
		return nil, proofError("the DPoP proof's signature does not verify with its jwk", err)
	}
	var c dpopClaims
	dec := json.NewDecoder(strings.NewReader(string(payload)))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return nil, proofError("the DPoP proof's claims are not a JSON object", err)
	}
	if c.JTI == "" || len(c.JTI) > 256 {
		return nil, proofError("the DPoP proof's jti is missing or longer than 256 bytes", nil)
	}
	if c.HTM != r.Method {
		return nil, proofError("the DPoP proof's htm is not this request's method", nil)
	}
	want, _ := normalHTU(d.origin + r.URL.EscapedPath())
	if got, ok := normalHTU(c.HTU); !ok || got != want {
		return nil, proofError("the DPoP proof's htu is not this request's URL", fmt.Errorf("htu %q, want %q", c.HTU, want))
	}
	iatF, err := c.IAT.Float64()
	if err != nil || iatF < 0 || iatF > 1e11 {
		return nil, proofError("the DPoP proof's iat is missing or not a number", nil)
	}
	iat := time.Unix(int64(iatF), 0)
	now := d.now()
	if iat.After(now.Add(d.leeway)) {
		return nil, proofError("the DPoP proof's iat is in the future", nil)
	}
	if iat.Before(now.Add(-d.maxAge - d.leeway)) {
		return nil, proofError("the DPoP proof is too old (iat)", nil)
	}
	sum := sha256.Sum256([]byte(tok))
	if want := base64.RawURLEncoding.EncodeToString(sum[:]); subtle.ConstantTimeCompare([]byte(c.ATH), []byte(want)) != 1 {
		return nil, proofError("the DPoP proof's ath is not the hash of this access token", nil)
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, proofError("the DPoP proof's jwk has no thumbprint", err)
	}
	jkt := base64.RawURLEncoding.EncodeToString(tp)
	return &verified{jkt: jkt, jti: digest(jkt, c.JTI), iat: iat}, nil
}

// bind finishes the DPoP checks of a request whose token validated as p:
// the token is bound to the proof's key (cnf.jkt), and the proof would
// be accepted by the replay cache. It records nothing (record does).
func (d *dpop) bind(p *Principal, v *verified) error {
	if p.jkt == "" {
		return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, dpop: true,
			Description: "the access token is not DPoP-bound (no cnf.jkt) but was sent as Authorization: DPoP"}
	}
	if p.otherCnf {
		// Bound to a DPoP key and to something else (an mTLS certificate,
		// a jwk): a proof of the key alone does not satisfy the binding.
		return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, dpop: true,
			Description: "the access token is also bound to a confirmation method this server cannot check (cnf other than jkt)"}
	}
	if subtle.ConstantTimeCompare([]byte(p.jkt), []byte(v.jkt)) != 1 {
		return proofError("the DPoP proof's key is not the key the token is bound to (cnf.jkt)", nil)
	}
	if why := d.seen.check(p.Name, v.jti, v.iat, d.now()); why != "" {
		return proofError(why, nil)
	}
	return nil
}

// record remembers the proof of a request that passed every check and
// cap, so that it is used once; an error when it was used meanwhile.
func (d *dpop) record(p *Principal, v *verified) error {
	if why := d.seen.add(p.Name, v.jti, v.iat, d.now()); why != "" {
		return proofError(why, nil)
	}
	return nil
}

// authenticate is the JWT and Introspection providers' Authenticate:
// Bearer for unbound tokens (unless DPoP is required), DPoP with a proof
// for bound ones, the proof recorded. validate turns a token into its
// principal.
func (d *dpop) authenticate(r *http.Request, validate func(tok string) (*Principal, error)) (*Principal, error) {
	p, v, err := d.authenticateProof(r, validate)
	if err != nil {
		return nil, err
	}
	if v != nil {
		if err := d.record(p, v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// authenticateProof is authenticate without recording the proof: it
// returns the proof (nil for a bearer token) for the caller to record
// once the request passed its caps (Guard), so that a refused request
// does not fill the replay cache.
func (d *dpop) authenticateProof(r *http.Request, validate func(tok string) (*Principal, error)) (*Principal, *verified, error) {
	scheme, tok, err := accessToken(r.Header.Get("Authorization"))
	if err != nil {
		return nil, nil, err
	}
	if scheme == "bearer" {
		if d.required {
			return nil, nil, &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, dpop: true,
				Description: "this server accepts only DPoP-bound tokens: send Authorization: DPoP with a DPoP proof"}
		}
		p, err := validate(tok)
		if err != nil {
			return nil, nil, err
		}
		if p.jkt != "" || p.otherCnf {
			return nil, nil, &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, dpop: p.jkt != "",
				Description: "the access token is bound to a key: send it as Authorization: DPoP with a DPoP proof, not as a bearer token"}
		}
		return p, nil, nil
	}
	// DPoP: the proof first (local, no token lookup for a forged one).
	v, err := d.check(r, tok)
	if err != nil {
		return nil, nil, err
	}
	p, err := validate(tok)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Code != "" {
			e2 := *e
			e2.dpop = true
			return nil, nil, &e2
		}
		return nil, nil, err
	}
	if err := d.bind(p, v); err != nil {
		return nil, nil, err
	}
	return p, v, nil
}

// accessToken returns the scheme ("bearer" or "dpop") and token of an
// Authorization header, errMissing without one (or with another scheme).
func accessToken(h string) (scheme, tok string, err error) {
	if h == "" {
		return "", "", errMissing
	}
	scheme, cred, ok := ParseAuthorization(h)
	if !ok {
		return "", "", &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Description: "malformed Authorization header"}
	}
	if scheme != "bearer" && scheme != "dpop" {
		return "", "", errMissing
	}
	if !isToken68(cred) {
		return "", "", &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Description: "malformed access token"}
	}
	return scheme, cred, nil
}

// cnfClaim is a token's confirmation claim (RFC 7800): jkt for DPoP;
// any other member binds the token to something this server cannot check.
type cnfClaim map[string]json.RawMessage

// binding returns the DPoP key thumbprint of a cnf claim and whether it
// binds the token to something else (mTLS x5t#S256, a jwk, ...).
func (c cnfClaim) binding() (jkt string, other bool) {
	for k, v := range c {
		if k == "jkt" {
			if json.Unmarshal(v, &jkt) != nil || jkt == "" {
				other = true
			}
			continue
		}
		other = true
	}
	return jkt, other
}
