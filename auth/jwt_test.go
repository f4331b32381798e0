package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

const testResource = "https://mcp.example.test/mcp"

// issuer is an authorization server's metadata and JWKS endpoints on
// loopback, with keys that can be rotated.
type issuer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetches atomic.Int32
}

func newIssuer(t testing.TB) *issuer {
	is := &issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		is.mu.Lock()
		set := jose.JSONWebKeySet{Keys: is.keys}
		is.mu.Unlock()
		_ = json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) publish(keys ...jose.JSONWebKey) {
	is.mu.Lock()
	is.keys = keys
	is.mu.Unlock()
}

type signer struct {
	kid string
	alg jwt.SigningMethod
	key any
}

func newRSA(t testing.TB, kid string) signer {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, alg: jwt.SigningMethodRS256, key: k}
}

func newEC(t testing.TB, kid string) signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, alg: jwt.SigningMethodES256, key: k}
}

func (s signer) public() jose.JSONWebKey {
	var pub any
	switch k := s.key.(type) {
	case *rsa.PrivateKey:
		pub = &k.PublicKey
	case *ecdsa.PrivateKey:
		pub = &k.PublicKey
	}
	return jose.JSONWebKey{Key: pub, KeyID: s.kid, Algorithm: s.alg.Alg(), Use: "sig"}
}

// sign signs claims as a JWT access token (typ at+jwt, RFC 9068).
func (s signer) sign(t testing.TB, claims jwt.MapClaims) string {
	return s.signTyp(t, claims, "at+jwt")
}

// signTyp signs claims with the typ header typ ("" for none).
func (s signer) signTyp(t testing.TB, claims jwt.MapClaims, typ string) string {
	tok := jwt.NewWithClaims(s.alg, claims)
	if typ == "" {
		delete(tok.Header, "typ")
	} else {
		tok.Header["typ"] = typ
	}
	if s.kid != "" {
		tok.Header["kid"] = s.kid
	}
	out, err := tok.SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func claimsAt(is *issuer, now time.Time) jwt.MapClaims {
	return jwt.MapClaims{"iss": is.srv.URL, "aud": testResource, "sub": "alice", "scope": "mcp:tools extra",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
}

func newTestJWT(t testing.TB, is *issuer, c *clock) *JWT {
	j, err := NewJWT(JWTConfig{Issuer: is.srv.URL, Audience: testResource, MinRefresh: 10 * time.Second,
		Leeway: 5 * time.Second, Now: c.now, HTTPClient: is.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func wantInvalid(t *testing.T, err error, desc string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	if e.Status != 401 || e.Code != CodeInvalidToken || !strings.Contains(e.Description, desc) {
		t.Fatalf("err = %d %q %q, want 401 invalid_token %q", e.Status, e.Code, e.Description, desc)
	}
}

func TestJWTGood(t *testing.T) {
	is := newIssuer(t)
	k := newRSA(t, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(t, is, c)
	p, err := j.Validate(context.Background(), k.sign(t, claimsAt(is, c.now())))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "alice" || len(p.missing([]string{"mcp:tools", "extra"})) != 0 || len(p.missing([]string{"admin"})) == 0 {
		t.Fatalf("principal = %+v", p)
	}
	// client_credentials tokens may carry client_id and no sub.
	cl := claimsAt(is, c.now())
	delete(cl, "sub")
	cl["client_id"] = "svc"
	if p, err = j.Validate(context.Background(), k.sign(t, cl)); err != nil || p.Name != "svc" {
		t.Fatalf("client_id token: %v %+v", err, p)
	}
	// An EC key too, found by discovery from the issuer's metadata.
	e := newEC(t, "e1")
	is.publish(k.public(), e.public())
	c.add(11 * time.Second)
	if _, err := j.Validate(context.Background(), e.sign(t, claimsAt(is, c.now()))); err != nil {
		t.Fatal(err)
	}
}

func TestJWTRefusals(t *testing.T) {
	is := newIssuer(t)
	k := newRSA(t, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(t, is, c)
	now := c.now()
	mod := func(f func(jwt.MapClaims)) string {
		cl := claimsAt(is, now)
		f(cl)
		return k.sign(t, cl)
	}
	cases := []struct {
		name, tok, desc string
	}{
		{"expired", mod(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }), "expired"},
		{"no exp", mod(func(c jwt.MapClaims) { delete(c, "exp") }), "required claim"},
		{"not yet", mod(func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() }), "not valid yet"},
		{"wrong aud", mod(func(c jwt.MapClaims) { c["aud"] = "https://other.example.test/mcp" }), "not for this resource"},
		{"no aud", mod(func(c jwt.MapClaims) { delete(c, "aud") }), "required claim"},
		{"wrong iss", mod(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.test" }), "another issuer"},
		{"no subject", mod(func(c jwt.MapClaims) { delete(c, "sub") }), "no subject"},
		{"garbage", "not.a.token", "malformed"},
		{"oversized", strings.Repeat("a", 9000), "longer than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := j.Validate(context.Background(), tc.tok)
			wantInvalid(t, err, tc.desc)
		})
	}
	// Within the leeway, an expired token is still good.
	if _, err := j.Validate(context.Background(), mod(func(c jwt.MapClaims) { c["exp"] = now.Add(-2 * time.Second).Unix() })); err != nil {
		t.Fatalf("within leeway: %v", err)
	}
}

// TestJWTTypeMustBeATJWT is issue 25 item 10: RFC 9068 §4 has a resource
// server refuse a JWT whose typ is not at+jwt (an ID token, a DPoP proof,
// any other JWT the issuer signs), unless the operator opts out for an
// issuer that cannot set it.
func TestJWTTypeMustBeATJWT(t *testing.T) {
	is := newIssuer(t)
	k := newRSA(t, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(t, is, c)
	for _, typ := range []string{"JWT", "", "jwt", "dpop+jwt", "application/jwt", "at+jwt2", "xat+jwt"} {
		_, err := j.Validate(context.Background(), k.signTyp(t, claimsAt(is, c.now()), typ))
		wantInvalid(t, err, "at+jwt")
	}
	for _, typ := range []string{"at+jwt", "application/at+jwt", "AT+JWT", "Application/At+JWT"} {
		if _, err := j.Validate(context.Background(), k.signTyp(t, claimsAt(is, c.now()), typ)); err != nil {
			t.Errorf("typ %q: %v", typ, err)
		}
	}
	any, err := NewJWT(JWTConfig{Issuer: is.srv.URL, Audience: testResource, AllowAnyTyp: true, Now: c.now, HTTPClient: is.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"JWT", ""} {
		if _, err := any.Validate(context.Background(), k.signTyp(t, claimsAt(is, c.now()), typ)); err != nil {
			t.Errorf("AllowAnyTyp, typ %q: %v", typ, err)
		}
	}
}

func TestJWTAlgorithmAttacks(t *testing.T) {
	is := newIssuer(t)
	k := newRSA(t, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(t, is, c)
	cl := claimsAt(is, c.now())
	b64 := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	// alg none, unsigned.
	none := b64(map[string]string{"alg": "none", "typ": "JWT", "kid": "k1"}) + "." + b64(cl) + "."
	_, err := j.Validate(context.Background(), none)
	wantInvalid(t, err, "signature")
	// HS256 keyed with the issuer's public key (the classic confusion).
	der, _ := x509.MarshalPKIXPublicKey(&k.key.(*rsa.PrivateKey).PublicKey)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	for _, secret := range [][]byte{pemKey, der} {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, cl)
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		_, err = j.Validate(context.Background(), s)
		wantInvalid(t, err, "signature")
	}
	// A symmetric key in the JWKS is never used.
	is.publish(k.public(), jose.JSONWebKey{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "h1", Algorithm: "HS256"})
	c.add(time.Hour + time.Minute)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claimsAt(is, c.now()))
	tok.Header["kid"] = "h1"
	s, _ := tok.SignedString([]byte("0123456789abcdef0123456789abcdef"))
	_, err = j.Validate(context.Background(), s)
	wantInvalid(t, err, "signature")
	// A signature by another key under a known kid.
	other := newRSA(t, "k1")
	_, err = j.Validate(context.Background(), other.sign(t, claimsAt(is, c.now())))
	wantInvalid(t, err, "signature")
	// An allow-list without RS256 refuses an RS256 token.
	j2, err := NewJWT(JWTConfig{Issuer: is.srv.URL, Audience: testResource, Algorithms: []string{"ES256"}, Now: c.now, HTTPClient: is.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = j2.Validate(context.Background(), k.sign(t, claimsAt(is, c.now())))
	wantInvalid(t, err, "signature")
	if _, err := NewJWT(JWTConfig{Issuer: "x", Audience: "y", Algorithms: []string{"HS256"}}); err == nil {
		t.Fatal("HS256 in the allow-list was accepted")
	}
	if _, err := NewJWT(JWTConfig{Issuer: "x", Audience: "y", Algorithms: []string{"none"}}); err == nil {
		t.Fatal("none in the allow-list was accepted")
	}
}

func TestJWTRotation(t *testing.T) {
	is := newIssuer(t)
	k1, k2 := newRSA(t, "k1"), newRSA(t, "k2")
	is.publish(k1.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(t, is, c)
	if _, err := j.Validate(context.Background(), k1.sign(t, claimsAt(is, c.now()))); err != nil {
		t.Fatal(err)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
	// The issuer rotates to k2. Within the refetch floor, a flood of
	// tokens naming an unknown kid fetches nothing.
	is.publish(k2.public())
	for i := 0; i < 20; i++ {
		cl := claimsAt(is, c.now())
		cl["jti"] = strconv.Itoa(i)
		_, err := j.Validate(context.Background(), k2.sign(t, cl))
		wantInvalid(t, err, "unknown")
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("fetches after a flood = %d, want 1", n)
	}
	// After the floor, the unknown kid triggers one fetch and is found.
	c.add(11 * time.Second)
	if _, err := j.Validate(context.Background(), k2.sign(t, claimsAt(is, c.now()))); err != nil {
		t.Fatal(err)
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
	// k1's new tokens are refused now that the set no longer holds it.
	_, err := j.Validate(context.Background(), k1.sign(t, claimsAt(is, c.now())))
	wantInvalid(t, err, "unknown")
}

// TestJWTRotationSameKid is issue 25 item 11: an issuer that replaces
// its key under the same kid. A token the cached key does not verify makes
// the set be fetched again (once per floor) and the token verified once
// more; a flood of bad signatures within the floor fetches nothing.
func TestJWTRotationSameKid(t *testing.T) {
	is := newIssuer(t)
	k := newRSA(t, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(t, is, c)
	if _, err := j.Validate(context.Background(), k.sign(t, claimsAt(is, c.now()))); err != nil {
		t.Fatal(err)
	}
	for round := 2; round <= 6; round++ {
		c.add(11 * time.Second) // past the 10 s floor
		k = newRSA(t, "k1")
		is.publish(k.public())
		if _, err := j.Validate(context.Background(), k.sign(t, claimsAt(is, c.now()))); err != nil {
			t.Fatalf("round %d: a token of the key replaced under the same kid: %v", round, err)
		}
		if n := is.fetches.Load(); n != int32(round) {
			t.Fatalf("round %d: fetches = %d, want %d", round, n, round)
		}
	}
	// Forged signatures under the known kid, within the floor: refused,
	// and no fetch beyond the first.
	c.add(11 * time.Second)
	before := is.fetches.Load()
	forger := newRSA(t, "k1")
	for i := 0; i < 20; i++ {
		cl := claimsAt(is, c.now())
		cl["jti"] = strconv.Itoa(i)
		_, err := j.Validate(context.Background(), forger.sign(t, cl))
		wantInvalid(t, err, "signature")
	}
	if n := is.fetches.Load() - before; n != 1 {
		t.Fatalf("a flood of bad signatures fetched the JWKS %d times, want 1", n)
	}
	// The genuine key still verifies, without a fetch.
	if _, err := j.Validate(context.Background(), k.sign(t, claimsAt(is, c.now()))); err != nil {
		t.Fatal(err)
	}
	if n := is.fetches.Load() - before; n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
}

func TestJWTCache(t *testing.T) {
	is := newIssuer(t)
	k := newRSA(t, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(t, is, c)
	tok := k.sign(t, claimsAt(is, c.now()))
	p1, err := j.Validate(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := j.Validate(context.Background(), tok)
	if err != nil || p1 != p2 {
		t.Fatalf("second validation: %v, cached principal reused: %v", err, p1 == p2)
	}
	// Once expired, the cached entry is not used: the token is refused.
	c.add(5*time.Minute + 10*time.Second)
	_, err = j.Validate(context.Background(), tok)
	wantInvalid(t, err, "expired")
}

func TestJWTIssuerDown(t *testing.T) {
	is := newIssuer(t)
	k := newRSA(t, "k1")
	c := &clock{t: time.Now()}
	j := newTestJWT(t, is, c)
	tok := k.sign(t, claimsAt(is, c.now()))
	is.srv.Close()
	_, err := j.Validate(context.Background(), tok)
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable {
		t.Fatalf("err = %v, want 503", err)
	}
}
