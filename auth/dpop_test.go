package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// holder is a DPoP client: its key pair and a proof maker.
type holder struct {
	key *ecdsa.PrivateKey
	jkt string
	n   atomic.Int64
}

func newHolder(t testing.TB) *holder {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := (&jose.JSONWebKey{Key: &k.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &holder{key: k, jkt: base64.RawURLEncoding.EncodeToString(tp)}
}

func ath(tok string) string {
	s := sha256.Sum256([]byte(tok))
	return base64.RawURLEncoding.EncodeToString(s[:])
}

// claims are a proof's claims for method and url, bound to tok.
func (h *holder) claims(method, url, tok string, iat time.Time) map[string]any {
	return map[string]any{"jti": "p-" + strconv.FormatInt(h.n.Add(1), 10), "htm": method, "htu": url, "iat": iat.Unix(), "ath": ath(tok)}
}

// sign makes a compact JWS of claims with typ and the holder's public key
// embedded (what a DPoP client sends).
func (h *holder) sign(t testing.TB, claims map[string]any, typ string) string {
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType(jose.ContentType(typ))
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: h.key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	obj, err := s.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// proof is a good proof of a POST to testResource for tok at iat.
func (h *holder) proof(t testing.TB, tok string, iat time.Time) string {
	return h.sign(t, h.claims(http.MethodPost, testResource, tok, iat), "dpop+jwt")
}

// handmade builds a JWS from a raw header and claims, signed by sign.
func handmade(header, claims map[string]any, sign func(in []byte) []byte) string {
	hb, _ := json.Marshal(header)
	cb, _ := json.Marshal(claims)
	in := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	return in + "." + base64.RawURLEncoding.EncodeToString(sign([]byte(in)))
}

func dpopReq(tok string, proofs ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, testResource, nil)
	r.Header.Set("Authorization", "DPoP "+tok)
	for _, p := range proofs {
		r.Header.Add("DPoP", p)
	}
	return r
}

func wantCode(t *testing.T, err error, status int, code, desc string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	if e.Status != status || e.Code != code || !strings.Contains(e.Description, desc) {
		t.Fatalf("err = %d %q %q, want %d %q %q", e.Status, e.Code, e.Description, status, code, desc)
	}
	return e
}

// dpopFixture is an issuer, a JWT provider trusting it and a client key.
type dpopFixture struct {
	is *issuer
	k  signer
	c  *clock
	j  *JWT
	h  *holder
}

func newDPoPFixture(t *testing.T, cfg DPoPConfig) *dpopFixture {
	is := newIssuer(t)
	k := newEC(t, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j, err := NewJWT(JWTConfig{Issuer: is.srv.URL, Audience: testResource, Leeway: 5 * time.Second, Now: c.now,
		HTTPClient: is.srv.Client(), DPoP: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return &dpopFixture{is: is, k: k, c: c, j: j, h: newHolder(t)}
}

// bound is a token bound to jkt.
func (f *dpopFixture) bound(t testing.TB, jkt string) string {
	cl := claimsAt(f.is, f.c.now())
	cl["cnf"] = map[string]string{"jkt": jkt}
	return f.k.sign(t, cl)
}

// TestDPoPGood: a DPoP-bound token with a proof of its key is accepted
// (issue 25 item 12), with htu compared without query or fragment and
// normalized, and a fresh proof per request.
func TestDPoPGood(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{})
	tok := f.bound(t, f.h.jkt)
	for i, htu := range []string{testResource, testResource + "?x=1#frag", "HTTPS://MCP.example.test:443/mcp", "https://mcp.example.test/x/../mcp"} {
		pr := f.h.sign(t, f.h.claims(http.MethodPost, htu, tok, f.c.now()), "dpop+jwt")
		p, err := f.j.Authenticate(dpopReq(tok, pr))
		if err != nil || p.Name != "alice" {
			t.Fatalf("proof %d (htu %s): %v %+v", i, htu, err, p)
		}
	}
	// An unbound token still works as a bearer token.
	r := httptest.NewRequest(http.MethodPost, testResource, nil)
	r.Header.Set("Authorization", "Bearer "+f.k.sign(t, claimsAt(f.is, f.c.now())))
	if _, err := f.j.Authenticate(r); err != nil {
		t.Fatal(err)
	}
}

// TestDPoPRefusals: every check of a proof and of the binding, each with
// a request that fails it.
func TestDPoPRefusals(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{})
	h := f.h
	tok := f.bound(t, h.jkt)
	now := f.c.now()
	mod := func(edit func(map[string]any)) string {
		cl := h.claims(http.MethodPost, testResource, tok, now)
		edit(cl)
		return h.sign(t, cl, "dpop+jwt")
	}
	esSign := func(k *ecdsa.PrivateKey) func([]byte) []byte {
		return func(in []byte) []byte {
			d := sha256.Sum256(in)
			r, sg, err := ecdsa.Sign(rand.Reader, k, d[:])
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, 64)
			r.FillBytes(out[:32])
			sg.FillBytes(out[32:])
			return out
		}
	}
	pubJWK := func(k *ecdsa.PrivateKey) map[string]any {
		b, _ := json.Marshal(jose.JSONWebKey{Key: &k.PublicKey})
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	privJWK := func(k *ecdsa.PrivateKey) map[string]any {
		b, _ := json.Marshal(jose.JSONWebKey{Key: k})
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	good := h.claims(http.MethodPost, testResource, tok, now)
	other := newHolder(t)
	secret := []byte("0123456789abcdef0123456789abcdef")
	cases := []struct {
		name   string
		req    *http.Request
		code   string
		desc   string
		status int
	}{
		{"no proof", dpopReq(tok), CodeInvalidDPoPProof, "missing", 401},
		{"two proofs", dpopReq(tok, h.proof(t, tok, now), h.proof(t, tok, now)), CodeInvalidDPoPProof, "more than one", 401},
		{"not a JWS", dpopReq(tok, "not-a-proof"), CodeInvalidDPoPProof, "not a JWS", 401},
		{"oversized", dpopReq(tok, strings.Repeat("a", 9000)), CodeInvalidDPoPProof, "longer than", 401},
		{"typ JWT", dpopReq(tok, h.sign(t, good, "JWT")), CodeInvalidDPoPProof, "typ", 401},
		{"no typ", dpopReq(tok, handmade(map[string]any{"alg": "ES256", "jwk": pubJWK(h.key)}, good, esSign(h.key))), CodeInvalidDPoPProof, "typ", 401},
		{"HS256 with an oct jwk", dpopReq(tok, handmade(map[string]any{"typ": "dpop+jwt", "alg": "HS256",
			"jwk": map[string]any{"kty": "oct", "k": base64.RawURLEncoding.EncodeToString(secret)}}, good,
			func(in []byte) []byte { m := hmac.New(sha256.New, secret); m.Write(in); return m.Sum(nil) })), CodeInvalidDPoPProof, "allowed algorithm", 401},
		{"alg none", dpopReq(tok, handmade(map[string]any{"typ": "dpop+jwt", "alg": "none", "jwk": pubJWK(h.key)}, good,
			func([]byte) []byte { return nil })), CodeInvalidDPoPProof, "allowed algorithm", 401},
		{"no jwk", dpopReq(tok, handmade(map[string]any{"typ": "dpop+jwt", "alg": "ES256"}, good, esSign(h.key))), CodeInvalidDPoPProof, "jwk", 401},
		{"private key in jwk", dpopReq(tok, handmade(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": privJWK(h.key)}, good, esSign(h.key))), CodeInvalidDPoPProof, "", 401},
		{"signed by another key than its jwk", dpopReq(tok, handmade(map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": pubJWK(h.key)}, good, esSign(other.key))), CodeInvalidDPoPProof, "signature", 401},
		{"htm GET", dpopReq(tok, mod(func(c map[string]any) { c["htm"] = "GET" })), CodeInvalidDPoPProof, "htm", 401},
		{"htm lower case", dpopReq(tok, mod(func(c map[string]any) { c["htm"] = "post" })), CodeInvalidDPoPProof, "htm", 401},
		{"htu other host", dpopReq(tok, mod(func(c map[string]any) { c["htu"] = "https://evil.example.test/mcp" })), CodeInvalidDPoPProof, "htu", 401},
		{"htu other path", dpopReq(tok, mod(func(c map[string]any) { c["htu"] = "https://mcp.example.test/other" })), CodeInvalidDPoPProof, "htu", 401},
		{"htu other scheme", dpopReq(tok, mod(func(c map[string]any) { c["htu"] = "http://mcp.example.test/mcp" })), CodeInvalidDPoPProof, "htu", 401},
		{"htu relative", dpopReq(tok, mod(func(c map[string]any) { c["htu"] = "/mcp" })), CodeInvalidDPoPProof, "htu", 401},
		{"no htu", dpopReq(tok, mod(func(c map[string]any) { delete(c, "htu") })), CodeInvalidDPoPProof, "htu", 401},
		{"iat too old", dpopReq(tok, mod(func(c map[string]any) { c["iat"] = now.Add(-2 * time.Minute).Unix() })), CodeInvalidDPoPProof, "too old", 401},
		{"iat in the future", dpopReq(tok, mod(func(c map[string]any) { c["iat"] = now.Add(time.Minute).Unix() })), CodeInvalidDPoPProof, "future", 401},
		{"no iat", dpopReq(tok, mod(func(c map[string]any) { delete(c, "iat") })), CodeInvalidDPoPProof, "iat", 401},
		{"iat huge", dpopReq(tok, mod(func(c map[string]any) { c["iat"] = 1e300 })), CodeInvalidDPoPProof, "iat", 401},
		{"iat negative", dpopReq(tok, mod(func(c map[string]any) { c["iat"] = -1 })), CodeInvalidDPoPProof, "iat", 401},
		{"iat a string", dpopReq(tok, mod(func(c map[string]any) { c["iat"] = "now" })), CodeInvalidDPoPProof, "claims", 401},
		{"no jti", dpopReq(tok, mod(func(c map[string]any) { delete(c, "jti") })), CodeInvalidDPoPProof, "jti", 401},
		{"no ath", dpopReq(tok, mod(func(c map[string]any) { delete(c, "ath") })), CodeInvalidDPoPProof, "ath", 401},
		{"ath of another token", dpopReq(tok, mod(func(c map[string]any) { c["ath"] = ath(tok + "x") })), CodeInvalidDPoPProof, "ath", 401},
		{"ath unencoded hash hex", dpopReq(tok, mod(func(c map[string]any) { s := sha256.Sum256([]byte(tok)); c["ath"] = string(s[:]) })), CodeInvalidDPoPProof, "ath", 401},
		{"proof key is not the bound key", dpopReq(tok, other.proof(t, tok, now)), CodeInvalidDPoPProof, "cnf.jkt", 401},
		{"token bound to another key", dpopReq(f.bound(t, other.jkt), h.proof(t, f.bound(t, other.jkt), now)), CodeInvalidDPoPProof, "", 401},
		{"unbound token with DPoP", func() *http.Request {
			u := f.k.sign(t, claimsAt(f.is, now))
			return dpopReq(u, h.proof(t, u, now))
		}(), CodeInvalidToken, "not DPoP-bound", 401},
		{"expired bound token with a good proof", func() *http.Request {
			cl := claimsAt(f.is, now)
			cl["cnf"] = map[string]string{"jkt": h.jkt}
			cl["exp"] = now.Add(-time.Hour).Unix()
			u := f.k.sign(t, cl)
			return dpopReq(u, h.proof(t, u, now))
		}(), CodeInvalidToken, "expired", 401},
		{"bound token as Bearer", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, testResource, nil)
			r.Header.Set("Authorization", "Bearer "+tok)
			r.Header.Set("DPoP", h.proof(t, tok, now))
			return r
		}(), CodeInvalidToken, "bound to a key", 401},
		{"mTLS-bound token as Bearer", func() *http.Request {
			cl := claimsAt(f.is, now)
			cl["cnf"] = map[string]string{"x5t#S256": "abc"}
			r := httptest.NewRequest(http.MethodPost, testResource, nil)
			r.Header.Set("Authorization", "Bearer "+f.k.sign(t, cl))
			return r
		}(), CodeInvalidToken, "bound to a key", 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.j.Authenticate(tc.req)
			e := wantCode(t, err, tc.status, tc.code, tc.desc)
			if tc.name != "mTLS-bound token as Bearer" && !e.dpop {
				t.Errorf("the refusal does not answer a DPoP challenge")
			}
		})
	}
	// Replay: a proof is good once.
	pr := h.proof(t, tok, now)
	if _, err := f.j.Authenticate(dpopReq(tok, pr)); err != nil {
		t.Fatal(err)
	}
	_, err := f.j.Authenticate(dpopReq(tok, pr))
	wantCode(t, err, 401, CodeInvalidDPoPProof, "used before")
	// The same jti from another key is another proof.
	other2 := f.bound(t, other.jkt)
	cl := other.claims(http.MethodPost, testResource, other2, now)
	cl["jti"] = "shared"
	if _, err := f.j.Authenticate(dpopReq(other2, other.sign(t, cl, "dpop+jwt"))); err != nil {
		t.Fatal(err)
	}
	cl = h.claims(http.MethodPost, testResource, tok, now)
	cl["jti"] = "shared"
	if _, err := f.j.Authenticate(dpopReq(tok, h.sign(t, cl, "dpop+jwt"))); err != nil {
		t.Fatal(err)
	}
}

// TestDPoPRequired: with Required, a bearer token is refused with a DPoP
// challenge, and the metadata says so.
func TestDPoPRequired(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{Required: true, Algorithms: []string{"ES256", "EdDSA"}})
	r := httptest.NewRequest(http.MethodPost, testResource, nil)
	r.Header.Set("Authorization", "Bearer "+f.k.sign(t, claimsAt(f.is, f.c.now())))
	_, err := f.j.Authenticate(r)
	wantCode(t, err, 401, CodeInvalidToken, "only DPoP-bound")
	tok := f.bound(t, f.h.jkt)
	if _, err := f.j.Authenticate(dpopReq(tok, f.h.proof(t, tok, f.c.now()))); err != nil {
		t.Fatal(err)
	}
	g, err := NewGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), GuardOptions{Provider: f.j, Resource: testResource, ScopesSupported: []string{"mcp:tools"}})
	if err != nil {
		t.Fatal(err)
	}
	md := do(g, http.MethodGet, MetadataPath+"/mcp", "")
	var m map[string]any
	if err := json.Unmarshal(md.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["dpop_bound_access_tokens_required"] != true || strings.Join(anyStrings(m["dpop_signing_alg_values_supported"]), " ") != "ES256 EdDSA" {
		t.Fatalf("metadata: %s", md.Body)
	}
	x := do(g, http.MethodPost, "/mcp", "")
	if got := x.Header().Get("WWW-Authenticate"); x.Code != 401 || !strings.HasPrefix(got, `DPoP resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"`) ||
		!strings.Contains(got, `algs="ES256 EdDSA"`) {
		t.Fatalf("no credentials: %d %q", x.Code, got)
	}
	if _, err := NewJWT(JWTConfig{Issuer: "x", Audience: testResource, DPoP: DPoPConfig{Algorithms: []string{"HS256"}}}); err == nil {
		t.Fatal("HS256 as a DPoP algorithm was accepted")
	}
}

func anyStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, s := range l {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}

// TestDPoPChallenges: the Guard answers DPoP refusals with a DPoP
// challenge (RFC 9449 §7.1) and publishes the DPoP algorithms; without
// Required, a request without credentials still gets the Bearer
// challenge and the metadata does not claim DPoP is required.
func TestDPoPChallenges(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{})
	g, err := NewGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), GuardOptions{Provider: f.j, Resource: testResource,
		RequiredScopes: []string{"mcp:tools", "admin"}})
	if err != nil {
		t.Fatal(err)
	}
	md := do(g, http.MethodGet, MetadataPath, "")
	if b := md.Body.String(); !strings.Contains(b, `"dpop_signing_alg_values_supported":["ES256",`) || strings.Contains(b, "dpop_bound_access_tokens_required") {
		t.Fatalf("metadata: %s", b)
	}
	if x := do(g, http.MethodPost, "/mcp", ""); !strings.HasPrefix(x.Header().Get("WWW-Authenticate"), "Bearer ") {
		t.Fatalf("no credentials: %q", x.Header().Get("WWW-Authenticate"))
	}
	tok := f.bound(t, f.h.jkt)
	rec := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		return w
	}
	x := rec(dpopReq(tok))
	want := `DPoP resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:tools admin", algs="` +
		strings.Join(DefaultDPoPAlgorithms(), " ") + `", error="invalid_dpop_proof", error_description="`
	if got := x.Header().Get("WWW-Authenticate"); x.Code != 401 || !strings.HasPrefix(got, want) {
		t.Fatalf("no proof: %d %q, want %q…", x.Code, got, want)
	}
	r := httptest.NewRequest(http.MethodPost, testResource, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	if got := rec(r).Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, `DPoP resource_metadata=`) || !strings.Contains(got, `error="invalid_token"`) {
		t.Fatalf("bound token as Bearer: %q", got)
	}
	// Authenticated with DPoP but lacking a scope: 403 with a DPoP challenge.
	x = rec(dpopReq(tok, f.h.proof(t, tok, f.c.now())))
	if got := x.Header().Get("WWW-Authenticate"); x.Code != 403 || !strings.HasPrefix(got, "DPoP ") || !strings.Contains(got, `error="insufficient_scope"`) {
		t.Fatalf("insufficient scope: %d %q", x.Code, got)
	}
}

// TestDPoPIntrospection: an introspection answer with cnf.jkt binds the
// token: DPoP with a proof of that key is accepted, Bearer refused.
func TestDPoPIntrospection(t *testing.T) {
	h := newHolder(t)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ans := map[string]any{"active": true, "sub": "alice", "aud": testResource, "exp": time.Now().Add(time.Minute).Unix()}
		if r.PostFormValue("token") == "bound" {
			ans["cnf"] = map[string]string{"jkt": h.jkt}
			ans["token_type"] = "DPoP"
		}
		_ = json.NewEncoder(w).Encode(ans)
	}))
	defer as.Close()
	in, err := NewIntrospection(IntrospectionConfig{URL: as.URL, Audience: testResource})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := in.Authenticate(dpopReq("bound", h.proof(t, "bound", time.Now()))); err != nil || p.Name != "alice" {
		t.Fatalf("DPoP: %v %+v", err, p)
	}
	_, err = in.Authenticate(reqWith("Authorization", "Bearer bound"))
	wantCode(t, err, 401, CodeInvalidToken, "bound to a key")
	other := newHolder(t)
	_, err = in.Authenticate(dpopReq("bound", other.proof(t, "bound", time.Now())))
	wantCode(t, err, 401, CodeInvalidDPoPProof, "cnf.jkt")
	_, err = in.Authenticate(dpopReq("plain", h.proof(t, "plain", time.Now())))
	wantCode(t, err, 401, CodeInvalidToken, "not DPoP-bound")
	if _, err := in.Authenticate(reqWith("Authorization", "Bearer plain")); err != nil {
		t.Fatal(err)
	}
}
