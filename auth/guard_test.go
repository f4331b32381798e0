package auth

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// echo answers with the principal it was handed.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p := FromContext(r.Context())
	if p == nil {
		_, _ = io.WriteString(w, "<none>")
		return
	}
	_, _ = io.WriteString(w, p.Name+" "+PrincipalName(r))
})

func newKeysGuard(t *testing.T, opts GuardOptions) (*Guard, *bytes.Buffer) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "keys")
	_ = os.WriteFile(file, []byte("alice "+hashKey("key-a")+" mcp:tools\nbob "+hashKey("key-b")+"\n"), 0o600)
	a, err := NewAPIKeys(APIKeysConfig{File: file})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	opts.Provider = a
	if opts.Resource == "" {
		opts.Resource = "https://mcp.example.test/mcp"
	}
	opts.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	g, err := NewGuard(echo, opts)
	if err != nil {
		t.Fatal(err)
	}
	return g, &logs
}

func do(g http.Handler, method, target, authz string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader("{}"))
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	return w
}

func TestGuardMetadata(t *testing.T) {
	g, _ := newKeysGuard(t, GuardOptions{AuthorizationServers: []string{"https://as.example.test"}, ScopesSupported: []string{"mcp:tools"}, ResourceName: "demo"})
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		w := do(g, http.MethodGet, path, "")
		if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %v", path, w.Code, w.Header())
		}
		var md map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &md); err != nil {
			t.Fatal(err)
		}
		if md["resource"] != "https://mcp.example.test/mcp" || md["authorization_servers"].([]any)[0] != "https://as.example.test" ||
			md["scopes_supported"].([]any)[0] != "mcp:tools" || md["bearer_methods_supported"].([]any)[0] != "header" || md["resource_name"] != "demo" {
			t.Fatalf("metadata %s", w.Body)
		}
	}
	if w := do(g, http.MethodOptions, "/.well-known/oauth-protected-resource/mcp", ""); w.Code != 204 || w.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d", w.Code)
	}
	if w := do(g, http.MethodPost, "/.well-known/oauth-protected-resource", ""); w.Code != 405 {
		t.Fatalf("POST metadata: %d", w.Code)
	}
	if g.MetadataURL() != "https://mcp.example.test/.well-known/oauth-protected-resource/mcp" {
		t.Fatal(g.MetadataURL())
	}
}

func TestGuardChallenges(t *testing.T) {
	g, logs := newKeysGuard(t, GuardOptions{ScopesSupported: []string{"mcp:tools"}})
	md := `resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"`
	// No credentials: 401 without an error code.
	w := do(g, http.MethodPost, "/mcp", "")
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Bearer `+md+`, scope="mcp:tools"` {
		t.Fatalf("no credentials: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	// A wrong key: invalid_token.
	w = do(g, http.MethodPost, "/mcp", "Bearer secret-wrong-key")
	if wa := w.Header().Get("WWW-Authenticate"); w.Code != 401 || !strings.Contains(wa, `error="invalid_token"`) || !strings.HasPrefix(wa, "Bearer "+md) {
		t.Fatalf("wrong key: %d %q", w.Code, wa)
	}
	// Malformed: 400 invalid_request.
	w = do(g, http.MethodPost, "/mcp", "Bearer a b")
	if w.Code != 400 || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_request"`) {
		t.Fatalf("malformed: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	// A token in the query string is refused, even a good one.
	w = do(g, http.MethodPost, "/mcp?access_token=key-a", "")
	if w.Code != 400 || !strings.Contains(w.Body.String(), "Authorization header") {
		t.Fatalf("query token: %d %s", w.Code, w.Body)
	}
	// Good.
	w = do(g, http.MethodPost, "/mcp", "Bearer key-a")
	if w.Code != 200 || w.Body.String() != "alice alice" {
		t.Fatalf("good: %d %s", w.Code, w.Body)
	}
	// Preflights pass unauthenticated.
	if w = do(g, http.MethodOptions, "/mcp", ""); w.Body.String() != "<none>" {
		t.Fatalf("preflight: %d %s", w.Code, w.Body)
	}
	// The audit log has a line per failure and never a credential.
	out := logs.String()
	if n := strings.Count(out, `"audit":"auth"`); n != 4 {
		t.Fatalf("%d audit lines, want 4:\n%s", n, out)
	}
	for _, secret := range []string{"secret-wrong-key", "key-a"} {
		if strings.Contains(out, secret) {
			t.Fatalf("the audit log holds a credential:\n%s", out)
		}
	}
}

func TestGuardScopes(t *testing.T) {
	g, _ := newKeysGuard(t, GuardOptions{RequiredScopes: []string{"mcp:tools"}})
	if w := do(g, http.MethodPost, "/mcp", "Bearer key-a"); w.Code != 200 {
		t.Fatalf("alice: %d", w.Code)
	}
	w := do(g, http.MethodPost, "/mcp", "Bearer key-b")
	wa := w.Header().Get("WWW-Authenticate")
	if w.Code != 403 || !strings.Contains(wa, `error="insufficient_scope"`) || !strings.Contains(wa, `scope="mcp:tools"`) {
		t.Fatalf("bob: %d %q", w.Code, wa)
	}
}

func TestGuardLimits(t *testing.T) {
	block := make(chan struct{})
	entered := make(chan struct{}, 4)
	file := filepath.Join(t.TempDir(), "keys")
	_ = os.WriteFile(file, []byte("alice "+hashKey("key-a")+"\nbob "+hashKey("key-b")+"\n"), 0o600)
	a, _ := NewAPIKeys(APIKeysConfig{File: file})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Block") != "" {
			entered <- struct{}{}
			<-block
		}
	})
	g, err := NewGuard(slow, GuardOptions{Provider: a, Resource: "http://127.0.0.1:1/mcp", Limits: Limits{Concurrent: 1, PerMinute: 3},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer key-a")
		r.Header.Set("X-Block", "1")
		g.ServeHTTP(httptest.NewRecorder(), r)
		close(done)
	}()
	<-entered
	// alice has one call in flight: her second is refused, bob's served.
	w := do(g, http.MethodPost, "/mcp", "Bearer key-a")
	if w.Code != 429 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), CapConcurrent) {
		t.Fatalf("second concurrent: %d %s", w.Code, w.Body)
	}
	if w = do(g, http.MethodPost, "/mcp", "Bearer key-b"); w.Code != 200 {
		t.Fatalf("bob: %d", w.Code)
	}
	close(block)
	<-done
	// The bucket (3 a minute): alice spent one; two more, then refused.
	for i := 0; i < 2; i++ {
		if w = do(g, http.MethodPost, "/mcp", "Bearer key-a"); w.Code != 200 {
			t.Fatalf("call %d: %d %s", i, w.Code, w.Body)
		}
	}
	w = do(g, http.MethodPost, "/mcp", "Bearer key-a")
	if w.Code != 429 || !strings.Contains(w.Body.String(), CapPerMinute) || w.Header().Get("Retry-After") == "" || w.Header().Get("Retry-After") == "0" {
		t.Fatalf("over the bucket: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	// GET streams are not counted.
	if w = do(g, http.MethodGet, "/mcp", "Bearer key-a"); w.Code != 200 {
		t.Fatalf("GET: %d", w.Code)
	}
}

// refusals counts Observer calls.
type refusals struct {
	mu sync.Mutex
	n  map[string]int // "provider/reason"
}

func (r *refusals) AuthRefused(provider, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[provider+"/"+reason]++
}

func TestGuardObserverReasons(t *testing.T) {
	obs := &refusals{}
	g, _ := newKeysGuard(t, GuardOptions{RequiredScopes: []string{"mcp:tools"}, Observer: obs, Limits: Limits{PerMinute: 1}})
	for _, c := range []struct{ target, authz string }{
		{"/mcp", ""},                    // missing
		{"/mcp", "Bearer"},              // malformed
		{"/mcp?access_token=key-a", ""}, // malformed: a token in the query
		{"/mcp", "Bearer nope"},         // invalid
		{"/mcp", "Bearer key-b"},        // forbidden: bob lacks the scope
		{"/mcp", "Bearer key-a"},        // served
		{"/mcp", "Bearer key-a"},        // limited: one a minute
	} {
		do(g, http.MethodPost, c.target, c.authz)
	}
	want := map[string]int{"apikey/missing": 1, "apikey/malformed": 2, "apikey/invalid": 1, "apikey/forbidden": 1, "apikey/limited": 1}
	if !maps.Equal(obs.n, want) {
		t.Fatalf("refusals %v, want %v", obs.n, want)
	}
	for k := range obs.n {
		if !slices.Contains(reasons(), strings.SplitN(k, "/", 2)[1]) {
			t.Fatalf("reason of %s not in reasons()", k)
		}
	}
	if got := reason(&Error{Status: http.StatusBadGateway, Description: "x"}); got != ReasonUpstream {
		t.Fatalf("a 502 is %q", got)
	}
}
