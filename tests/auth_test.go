package tests

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// End-to-end tests of authentication: wasmcp serve --http --auth … as a
// separate process, one test per provider, each with two principals.

const legacyInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

func withAuth(h map[string]string, authz string) map[string]string {
	out := map[string]string{"Accept": "application/json, text/event-stream"}
	for k, v := range h {
		out[k] = v
	}
	if authz != "" {
		out["Authorization"] = authz
	}
	return out
}

// checkOwnership opens a legacy session as owner and checks that other
// gets for it exactly what an unknown session id gets, on POST, GET and
// DELETE, while owner keeps using it.
func checkOwnership(t *testing.T, url, owner, other string) {
	t.Helper()
	x := httpDo(t, http.MethodPost, url, withAuth(nil, owner), legacyInit)
	sid := x.header.Get("Mcp-Session-Id")
	if x.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", x.status, x.body)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	unknown := map[string]string{"Mcp-Session-Id": strings.Repeat("0", len(sid)), "MCP-Protocol-Version": "2025-11-25"}
	if x := httpDo(t, http.MethodPost, url, withAuth(hdr, owner), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); x.status != 202 {
		t.Fatalf("initialized: %d", x.status)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if method == http.MethodPost {
			body = ping
		}
		theirs := httpDo(t, method, url, withAuth(hdr, other), body)
		none := httpDo(t, method, url, withAuth(unknown, other), body)
		if theirs.status != 404 || theirs.status != none.status || theirs.body != none.body {
			t.Fatalf("%s of another principal's session: %d %q; of an unknown one: %d %q", method, theirs.status, theirs.body, none.status, none.body)
		}
	}
	if x := httpDo(t, http.MethodPost, url, withAuth(hdr, owner), ping); x.status != 200 {
		t.Fatalf("the owner's ping: %d %s", x.status, x.body)
	}
	if x := httpDo(t, http.MethodPost, url, withAuth(hdr, owner), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hash","arguments":{"algorithm":"sha256","text":"abc"}}}`); x.status != 200 ||
		!strings.Contains(x.body, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Fatalf("the owner's tools/call: %d %s", x.status, x.body)
	}
	if x := httpDo(t, http.MethodDelete, url, withAuth(hdr, owner), ""); x.status != 204 {
		t.Fatalf("the owner's DELETE: %d", x.status)
	}
}

// checkRefused checks a request with authz is refused with status and a
// WWW-Authenticate starting with challenge.
func checkRefused(t *testing.T, url, authz string, status int, challenge string) {
	t.Helper()
	x := httpDo(t, http.MethodPost, url, withAuth(nil, authz), legacyInit)
	if x.status != status || !strings.HasPrefix(x.header.Get("WWW-Authenticate"), challenge) {
		t.Fatalf("Authorization %.20q: %d %q %s, want %d %q", authz, x.status, x.header.Get("WWW-Authenticate"), x.body, status, challenge)
	}
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestAuthNoneRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(wasmcpBin, "serve", "--tools", exampleTools(t), "--http", "192.0.2.1:0", "--cache-dir", compileCache, "--watch=false")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--allow-unauthenticated") || !strings.Contains(string(out), "--auth jwt|introspect|apikey|basic|forward") {
		t.Fatalf("serve on a non-loopback address without --auth: %v\n%s", err, out)
	}
}

func TestAuthAPIKey(t *testing.T) {
	t.Parallel()
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("alice sha256:"+sha256Hex("alice-key-1")+" mcp:tools\nbob sha256:"+sha256Hex("bob-key-2")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, "--auth", "apikey", "--auth-keys-file", keys, "--metrics-addr", "127.0.0.1:0")
	md := strings.TrimSuffix(s.URL, "/mcp") + "/.well-known/oauth-protected-resource/mcp"
	checkRefused(t, s.URL, "", 401, `Bearer resource_metadata="`+md+`"`)
	checkRefused(t, s.URL, "Bearer wrong-key", 401, `Bearer resource_metadata="`+md+`"`)
	x := httpDo(t, http.MethodGet, md, nil, "")
	var meta struct {
		Resource string `json:"resource"`
	}
	if x.status != 200 || json.Unmarshal([]byte(x.body), &meta) != nil || meta.Resource != s.URL || x.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("metadata: %d %s", x.status, x.body)
	}
	if x := httpDo(t, http.MethodPost, s.URL+"?access_token=alice-key-1", withAuth(nil, ""), legacyInit); x.status != 400 {
		t.Fatalf("query token: %d %s", x.status, x.body)
	}
	checkOwnership(t, s.URL, "Bearer alice-key-1", "Bearer bob-key-2")
	checkOwnership(t, s.URL, "Bearer bob-key-2", "Bearer alice-key-1")
	// The refusals above, counted by provider and reason (with --auth the
	// metrics are on their own listener).
	fams := scrape(t, metricsBase(t, s))
	for reason, want := range map[string]float64{"missing": 1, "invalid": 1, "malformed": 1} {
		if got := value(fams, "wasmcp_auth_refusals_total", map[string]string{"provider": "apikey", "reason": reason}); got != want {
			t.Errorf("wasmcp_auth_refusals_total{provider=apikey,reason=%s} = %v, want %v", reason, got, want)
		}
	}
	logs := s.Stderr.String()
	if !strings.Contains(logs, "audit=auth") {
		t.Fatalf("no audit line:\n%s", logs)
	}
	for _, secret := range []string{"alice-key-1", "bob-key-2", "wrong-key"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("the log holds a key:\n%s", logs)
		}
	}
}

// TestAuthAPIKeyFileBrokenFailsClosed is issue 25 item 14, end to end: an
// operator revokes a key and breaks the keys file's syntax in the same
// edit, or the file becomes unreadable. Every key is refused (503, counted
// as reason upstream) until the file parses again; then the revoked key
// stays refused and the others work.
func TestAuthAPIKeyFileBrokenFailsClosed(t *testing.T) {
	t.Parallel()
	keys := filepath.Join(t.TempDir(), "keys")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(keys+".tmp", []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(keys+".tmp", keys); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1200 * time.Millisecond) // the file is looked at once a second
	}
	alice, bob := "alice sha256:"+sha256Hex("alice-key-1")+"\n", "bob sha256:"+sha256Hex("bob-key-2")+"\n"
	write(alice + bob)
	s := startHTTP(t, "--auth", "apikey", "--auth-keys-file", keys, "--metrics-addr", "127.0.0.1:0")
	status := func(key string) int {
		return httpDo(t, http.MethodPost, s.URL, withAuth(nil, "Bearer "+key), legacyInit).status
	}
	if a, b := status("alice-key-1"), status("bob-key-2"); a != 200 || b != 200 {
		t.Fatalf("before: alice %d, bob %d", a, b)
	}
	// Revoking alice with a syntax error in the same edit.
	write("# alice revoked\nbob sha256:" + sha256Hex("bob-key-2")[:10] + "\n")
	if a, b := status("alice-key-1"), status("bob-key-2"); a != 503 || b != 503 {
		t.Fatalf("broken file: alice %d, bob %d; want 503 for both (fail closed)", a, b)
	}
	write(bob)
	if a, b := status("alice-key-1"), status("bob-key-2"); a != 401 || b != 200 {
		t.Fatalf("fixed file: alice %d, bob %d; want 401, 200", a, b)
	}
	// The file removed (unreadable): still closed.
	if err := os.Remove(keys); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	if b := status("bob-key-2"); b != 503 {
		t.Fatalf("file gone: bob %d, want 503", b)
	}
	fams := scrape(t, metricsBase(t, s))
	if got := value(fams, "wasmcp_auth_refusals_total", map[string]string{"provider": "apikey", "reason": "upstream"}); got != 3 {
		t.Errorf("wasmcp_auth_refusals_total{provider=apikey,reason=upstream} = %v, want 3", got)
	}
	if logs := s.Stderr.String(); !strings.Contains(logs, "refusing every credential") || strings.Contains(logs, "bob-key-2") {
		t.Errorf("the log lacks the refusal reason or holds a key:\n%s", logs)
	}
}

func TestAuthBasic(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "htpasswd")
	ha, _ := bcrypt.GenerateFromPassword([]byte("pw-alice"), bcrypt.MinCost)
	hb, _ := bcrypt.GenerateFromPassword([]byte("pw-bob"), bcrypt.MinCost)
	if err := os.WriteFile(file, []byte("alice:"+string(ha)+"\nbob:"+string(hb)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTP(t, "--auth", "basic", "--auth-htpasswd", file)
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	checkRefused(t, s.URL, "", 401, `Basic realm="wasmcp"`)
	checkRefused(t, s.URL, basic("alice", "pw-bob"), 401, `Basic realm="wasmcp"`)
	checkRefused(t, s.URL, basic("mallory", "pw-alice"), 401, `Basic realm="wasmcp"`)
	checkOwnership(t, s.URL, basic("alice", "pw-alice"), basic("bob", "pw-bob"))
}

func TestAuthForward(t *testing.T) {
	t.Parallel()
	fa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Forwarded-Uri") != "/mcp" {
			w.WriteHeader(500)
			return
		}
		switch r.Header.Get("Authorization") {
		case "Bearer session-alice":
			w.Header().Set("X-Auth-Principal", "alice")
		case "Bearer session-bob":
			w.Header().Set("X-Auth-Principal", "bob")
		default:
			w.WriteHeader(401)
			return
		}
		w.WriteHeader(200)
	}))
	defer fa.Close()
	s := startHTTP(t, "--auth", "forward", "--auth-forward-url", fa.URL+"/auth")
	checkRefused(t, s.URL, "", 401, `Bearer resource_metadata=`)
	checkRefused(t, s.URL, "Bearer session-eve", 401, `Bearer resource_metadata=`)
	checkOwnership(t, s.URL, "Bearer session-alice", "Bearer session-bob")
}

func TestAuthJWT(t *testing.T) {
	t.Parallel()
	key, issuerURL := rsaIssuer(t)
	s := startHTTP(t, "--auth", "jwt", "--auth-issuer", issuerURL, "--auth-scopes", "mcp:tools")
	sign := func(sub, aud, scope string, exp time.Duration) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": issuerURL, "aud": aud, "sub": sub, "scope": scope,
			"iat": time.Now().Unix(), "exp": time.Now().Add(exp).Unix()})
		tok.Header["kid"] = "k1"
		tok.Header["typ"] = "at+jwt"
		out, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + out
	}
	md := `Bearer resource_metadata="` + strings.TrimSuffix(s.URL, "/mcp") + `/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`
	checkRefused(t, s.URL, "", 401, md)
	checkRefused(t, s.URL, sign("alice", "https://elsewhere.example/mcp", "mcp:tools", time.Minute), 401, md+`, error="invalid_token"`)
	checkRefused(t, s.URL, sign("alice", s.URL, "mcp:tools", -time.Minute), 401, md+`, error="invalid_token"`)
	checkRefused(t, s.URL, sign("alice", s.URL, "other", time.Minute), 403, `Bearer resource_metadata=`)
	x := httpDo(t, http.MethodGet, strings.TrimSuffix(s.URL, "/mcp")+"/.well-known/oauth-protected-resource", nil, "")
	if x.status != 200 || !strings.Contains(x.body, `"authorization_servers":["`+issuerURL+`"]`) {
		t.Fatalf("metadata: %d %s", x.status, x.body)
	}
	checkOwnership(t, s.URL, sign("alice", s.URL, "mcp:tools", time.Minute), sign("bob", s.URL, "mcp:tools other", time.Minute))
}

// TestAuthJWTKeyReplacedUnderSameKid is issue 25 item 11, end to end: an
// issuer that mints a new key under the same kid while wasmcp runs (the
// conformance runner's token-audience scenario does so on every run).
// Five times over, every token signed by the new key is accepted, and a
// token of the replaced key is refused.
func TestAuthJWTKeyReplacedUnderSameKid(t *testing.T) {
	t.Parallel()
	var (
		issuerURL string
		mu        sync.Mutex
		key       *rsa.PrivateKey
	)
	newKey := func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		key = k
		mu.Unlock()
		return k
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuerURL, "jwks_uri": issuerURL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pub := &key.PublicKey
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: pub, KeyID: "same", Algorithm: "RS256", Use: "sig"}}})
	})
	as := httptest.NewServer(mux)
	defer as.Close()
	issuerURL = as.URL
	const floor = 50 * time.Millisecond
	s := startHTTP(t, "--auth", "jwt", "--auth-issuer", issuerURL, "--auth-jwks-min-refresh", floor.String())
	sign := func(k *rsa.PrivateKey, jti string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": issuerURL, "aud": s.URL, "sub": "alice", "jti": jti,
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Minute).Unix()})
		tok.Header["kid"] = "same"
		tok.Header["typ"] = "at+jwt"
		out, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + out
	}
	old := newKey()
	if x := httpDo(t, http.MethodPost, s.URL, withAuth(nil, sign(old, "0")), legacyInit); x.status != 200 {
		t.Fatalf("the first key: %d %s", x.status, x.body)
	}
	for round := 1; round <= 5; round++ {
		time.Sleep(2 * floor)
		k := newKey()
		for i := 0; i < 3; i++ {
			if x := httpDo(t, http.MethodPost, s.URL, withAuth(nil, sign(k, strconv.Itoa(round*10+i))), legacyInit); x.status != 200 {
				t.Fatalf("round %d, token %d of the key replaced under the same kid: %d %q %s", round, i, x.status, x.header.Get("WWW-Authenticate"), x.body)
			}
		}
		time.Sleep(2 * floor)
		checkRefused(t, s.URL, sign(old, strconv.Itoa(round)), 401, `Bearer resource_metadata=`)
		old = k
	}
}

// dpopProof is a DPoP proof (RFC 9449) by key for method url and tok.
func dpopProof(t *testing.T, key *ecdsa.PrivateKey, method, url, tok, jti string) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(tok))
	b, _ := json.Marshal(map[string]any{"jti": jti, "htm": method, "htu": url, "iat": time.Now().Unix(), "ath": base64.RawURLEncoding.EncodeToString(sum[:])})
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

// jktOf is the RFC 7638 thumbprint of key's public key, base64url.
func jktOf(t *testing.T, key *ecdsa.PrivateKey) string {
	tp, err := (&jose.JSONWebKey{Key: &key.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}

// TestAuthJWTDPoP is issue 25 item 12, end to end with wasmcp as a
// process: a DPoP-bound token (cnf.jkt) is accepted with Authorization:
// DPoP and a fresh proof of its key, a tool call included; the same token
// as Bearer, a replayed proof and a proof by another key are refused with
// DPoP challenges; the metadata publishes the DPoP algorithms. With
// --auth-dpop-required, an unbound bearer token is refused too.
func TestAuthJWTDPoP(t *testing.T) {
	t.Parallel()
	key, issuerURL := rsaIssuer(t)
	client, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	thief, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, required := range []bool{false, true} {
		t.Run("required="+strconv.FormatBool(required), func(t *testing.T) {
			t.Parallel()
			args := []string{"--auth", "jwt", "--auth-issuer", issuerURL}
			if required {
				args = append(args, "--auth-dpop-required")
			}
			s := startHTTP(t, args...)
			sign := func(jkt string) string {
				cl := jwt.MapClaims{"iss": issuerURL, "aud": s.URL, "sub": "alice", "iat": time.Now().Unix(), "exp": time.Now().Add(time.Minute).Unix()}
				if jkt != "" {
					cl["cnf"] = map[string]string{"jkt": jkt}
				}
				tok := jwt.NewWithClaims(jwt.SigningMethodRS256, cl)
				tok.Header["kid"], tok.Header["typ"] = "k1", "at+jwt"
				out, err := tok.SignedString(key)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			bound := sign(jktOf(t, client))
			n := 0
			post := func(scheme, tok, proof, body string, hdr map[string]string) exchange {
				h := withAuth(hdr, scheme+" "+tok)
				if proof != "" {
					h["DPoP"] = proof
				}
				return httpDo(t, http.MethodPost, s.URL, h, body)
			}
			fresh := func(k *ecdsa.PrivateKey, tok string) string {
				n++
				return dpopProof(t, k, http.MethodPost, s.URL, tok, "jti-"+strconv.Itoa(n))
			}
			x := post("DPoP", bound, fresh(client, bound), legacyInit, nil)
			sid := x.header.Get("Mcp-Session-Id")
			if x.status != 200 || sid == "" {
				t.Fatalf("DPoP initialize: %d %q %s", x.status, x.header.Get("WWW-Authenticate"), x.body)
			}
			hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
			if x := post("DPoP", bound, fresh(client, bound), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); x.status != 202 {
				t.Fatalf("initialized: %d %s", x.status, x.body)
			}
			call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hash","arguments":{"algorithm":"sha256","text":"abc"}}}`
			proof := fresh(client, bound)
			if x := post("DPoP", bound, proof, call, hdr); x.status != 200 || !strings.Contains(x.body, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
				t.Fatalf("DPoP tools/call: %d %s", x.status, x.body)
			}
			for name, x := range map[string]exchange{
				"replayed proof":   post("DPoP", bound, proof, call, hdr),
				"thief's proof":    post("DPoP", bound, fresh(thief, bound), call, hdr),
				"no proof":         post("DPoP", bound, "", call, hdr),
				"bound as Bearer":  post("Bearer", bound, "", call, hdr),
				"bound as Bearer+": post("Bearer", bound, fresh(client, bound), call, hdr),
			} {
				if ch := x.header.Get("WWW-Authenticate"); x.status != 401 || !strings.HasPrefix(ch, `DPoP resource_metadata="`) || !strings.Contains(ch, `algs="ES256`) {
					t.Errorf("%s: %d %q, want 401 with a DPoP challenge", name, x.status, ch)
				}
			}
			unbound := post("Bearer", sign(""), "", legacyInit, nil)
			if required != (unbound.status == 401) {
				t.Errorf("an unbound bearer token (required=%v): %d %q", required, unbound.status, unbound.header.Get("WWW-Authenticate"))
			}
			md := httpDo(t, http.MethodGet, strings.TrimSuffix(s.URL, "/mcp")+"/.well-known/oauth-protected-resource/mcp", nil, "")
			if !strings.Contains(md.body, `"dpop_signing_alg_values_supported":["ES256"`) || required != strings.Contains(md.body, `"dpop_bound_access_tokens_required":true`) {
				t.Errorf("metadata: %s", md.body)
			}
		})
	}
}

// TestAuthGrants: a module's [access] grants decide, per principal, which
// tools are listed and callable; a denied tool answers as an unknown one;
// every call is audited without its arguments.
func TestAuthGrants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, m := range []string{"codec.wasm", "textstats.wasm"} {
		b, err := os.ReadFile(filepath.Join(exampleTools(t), m))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// codec's tools need the admin scope, but hash is bob's alone.
	policy := "[access]\nscopes = [\"admin\"]\n\n[access.tools.hash]\nprincipals = [\"bob\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "codec.policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("alice sha256:"+sha256Hex("ka")+" admin\nbob sha256:"+sha256Hex("kb")+"\ncarol sha256:"+sha256Hex("kc")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--tools", dir, "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false", "--auth", "apikey", "--auth-keys-file", keys)
	session := func(key string) map[string]string {
		x := httpDo(t, http.MethodPost, s.URL, withAuth(nil, "Bearer "+key), legacyInit)
		if x.status != 200 {
			t.Fatalf("initialize: %d %s", x.status, x.body)
		}
		return withAuth(map[string]string{"Mcp-Session-Id": x.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}, "Bearer "+key)
	}
	list := func(h map[string]string) string {
		x := httpDo(t, http.MethodPost, s.URL, h, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		var out struct {
			Result struct{ Tools []struct{ Name string } }
		}
		if err := json.Unmarshal([]byte(sseData(x.body)), &out); err != nil {
			t.Fatalf("tools/list: %s", x.body)
		}
		var names []string
		for _, tl := range out.Result.Tools {
			names = append(names, tl.Name)
		}
		return strings.Join(names, ",")
	}
	alice, bob, carol := session("ka"), session("kb"), session("kc")
	// Twice each: the second list comes from the page cache.
	for i := 0; i < 2; i++ {
		for _, c := range []struct {
			who  map[string]string
			want string
		}{{alice, "text_stats,transcode"}, {bob, "hash,text_stats"}, {carol, "text_stats"}} {
			if got := list(c.who); got != c.want {
				t.Fatalf("listed %q, want %q", got, c.want)
			}
		}
	}
	call := func(h map[string]string, tool string) string {
		return sseData(httpDo(t, http.MethodPost, s.URL, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"algorithm":"sha256","text":"sekrit-arg"}}}`).body)
	}
	denied, unknown := call(carol, "hash"), call(carol, "nosuch")
	if strings.Replace(denied, "hash", "nosuch", 1) != unknown || !strings.Contains(denied, "Unknown tool") {
		t.Fatalf("denied: %s; unknown: %s", denied, unknown)
	}
	if got := call(bob, "hash"); !strings.Contains(got, `"content"`) || strings.Contains(got, "Unknown tool") {
		t.Fatalf("bob's hash: %s", got)
	}
	waitFor(t, 5*time.Second, "the audit line", func() bool {
		return strings.Contains(s.Stderr.String(), "audit=call principal=bob module=codec method=tools/call name=hash outcome=ok")
	})
	if strings.Contains(s.Stderr.String(), "sekrit-arg") {
		t.Fatalf("an argument reached the log:\n%s", s.Stderr)
	}
}

// sseData returns the JSON of a response body: the body itself, or the
// last data line of an SSE body.
func sseData(body string) string {
	if !strings.HasPrefix(body, "event:") && !strings.HasPrefix(body, "data:") && !strings.HasPrefix(body, "id:") {
		return body
	}
	last := ""
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			last = strings.TrimSpace(d)
		}
	}
	return last
}

// TestAuthTaskOwnership: a task belongs to the principal that created it;
// another principal's tasks/get, tasks/result, tasks/cancel get exactly
// what an unknown task id gets, and tasks/list does not show it.
func TestAuthTaskOwnership(t *testing.T) {
	t.Parallel()
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("alice sha256:"+sha256Hex("ka")+"\nbob sha256:"+sha256Hex("kb")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--tools", taskTools(t), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false",
		"--auth", "apikey", "--auth-keys-file", keys)
	session := func(key string) map[string]string {
		x := httpDo(t, http.MethodPost, s.URL, withAuth(nil, "Bearer "+key), `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
		if x.status != 200 {
			t.Fatalf("initialize: %d %s", x.status, x.body)
		}
		h := withAuth(map[string]string{"Mcp-Session-Id": x.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}, "Bearer "+key)
		httpDo(t, http.MethodPost, s.URL, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return h
	}
	call := func(h map[string]string, method, params string) string {
		return sseData(httpDo(t, http.MethodPost, s.URL, h, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`).body)
	}
	alice, bob := session("ka"), session("kb")
	var created struct {
		Result struct{ Task struct{ TaskID string } }
	}
	out := call(alice, "tools/call", `{"name":"slow_compute","arguments":{"seconds":5,"label":"a"},"task":{"ttl":120000}}`)
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Result.Task.TaskID == "" {
		t.Fatalf("task creation: %s", out)
	}
	id := created.Result.Task.TaskID
	unknownID := strings.Repeat("0", len(id))
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		theirs := call(bob, m, `{"taskId":"`+id+`"}`)
		none := call(bob, m, `{"taskId":"`+unknownID+`"}`)
		if strings.ReplaceAll(theirs, id, unknownID) != none || !strings.Contains(theirs, `"error"`) {
			t.Fatalf("%s of alice's task by bob: %s; of an unknown task: %s", m, theirs, none)
		}
	}
	if l := call(bob, "tasks/list", `{}`); strings.Contains(l, id) {
		t.Fatalf("bob's tasks/list shows alice's task: %s", l)
	}
	if l := call(alice, "tasks/list", `{}`); !strings.Contains(l, id) {
		t.Fatalf("alice's tasks/list lacks her task: %s", l)
	}
	if g := call(alice, "tasks/get", `{"taskId":"`+id+`"}`); !strings.Contains(g, `"status":"working"`) {
		t.Fatalf("alice's tasks/get: %s", g)
	}
	if c := call(alice, "tasks/cancel", `{"taskId":"`+id+`"}`); !strings.Contains(c, `"cancelled"`) {
		t.Fatalf("alice's tasks/cancel: %s", c)
	}
}

// TestAuthExposePrincipal: a guest learns its caller (name and scopes, never
// the credential) only when its policy sets expose_principal.
func TestAuthExposePrincipal(t *testing.T) {
	t.Parallel()
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("alice sha256:"+sha256Hex("alice-secret-key")+" mcp:tools admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	whoami := func(policy string) string {
		dir := t.TempDir()
		if err := guestbuild.Build(context.Background(), "testdata/whoami", filepath.Join(dir, "whoami.wasm")); err != nil {
			t.Fatal(err)
		}
		if policy != "" {
			if err := os.WriteFile(filepath.Join(dir, "whoami.policy.toml"), []byte(policy), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s := startServe(t, "--tools", dir, "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false", "--auth", "apikey", "--auth-keys-file", keys)
		x := httpDo(t, http.MethodPost, s.URL, withAuth(nil, "Bearer alice-secret-key"), legacyInit)
		h := withAuth(map[string]string{"Mcp-Session-Id": x.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}, "Bearer alice-secret-key")
		return sseData(httpDo(t, http.MethodPost, s.URL, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`).body)
	}
	if got := whoami("[access]\nexpose_principal = true\n"); !strings.Contains(got, `{\"name\":\"alice\",\"scopes\":[\"mcp:tools\",\"admin\"]}`) || strings.Contains(got, "alice-secret-key") {
		t.Fatalf("whoami with expose_principal: %s", got)
	}
	if got := whoami(""); !strings.Contains(got, `"text":"anonymous"`) {
		t.Fatalf("whoami without expose_principal: %s", got)
	}
}

// TestAuthHTTP3: the authentication guard covers HTTP/3 as it does TCP.
func TestAuthHTTP3(t *testing.T) {
	t.Parallel()
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("alice sha256:"+sha256Hex("ka")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTP3(t, exampleTools(t), "--auth", "apikey", "--auth-keys-file", keys)
	c := h3Client(t)
	if x := h3Do(t, c, http.MethodPost, s.URL, withAuth(nil, ""), legacyInit); x.status != 401 || !strings.HasPrefix(x.header.Get("WWW-Authenticate"), "Bearer resource_metadata=") {
		t.Fatalf("no key over HTTP/3: %d %q", x.status, x.header.Get("WWW-Authenticate"))
	}
	if x := h3Do(t, c, http.MethodPost, s.URL, withAuth(nil, "Bearer ka"), legacyInit); x.status != 200 || x.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("alice over HTTP/3: %d %s", x.status, x.body)
	}
	if x := h3Do(t, c, http.MethodGet, strings.TrimSuffix(s.URL, "/mcp")+"/.well-known/oauth-protected-resource/mcp", nil, ""); x.status != 200 || !strings.Contains(x.body, `"resource":"`+s.URL+`"`) {
		t.Fatalf("metadata over HTTP/3: %d %s", x.status, x.body)
	}
}

// rsaIssuer is an authorization server's metadata and JWKS on loopback,
// publishing one RS256 key under kid k1: the key to sign tokens with and
// the issuer's URL.
func rsaIssuer(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var issuerURL string
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuerURL, "jwks_uri": issuerURL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	as := httptest.NewServer(mux)
	t.Cleanup(as.Close)
	issuerURL = as.URL
	return key, issuerURL
}
