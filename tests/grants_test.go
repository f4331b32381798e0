package tests

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// End-to-end tests of grants and principals (docs/security.md, "Grants
// and principals"): wasmcp serve --http --auth apikey as a separate
// process, with two principals.

// grantKeys writes a keys file: alice holds the scopes mcp:tools and
// admin, bob none.
func grantKeys(t *testing.T) string {
	t.Helper()
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("alice sha256:"+sha256Hex("alice-key")+" mcp:tools admin\nbob sha256:"+sha256Hex("bob-key")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return keys
}

// legacySession opens an initialized 2025-11-25 session with authz and
// returns a function that sends one request in it and answers the
// exchange.
func legacySession(t *testing.T, url, authz string) func(body string) exchange {
	t.Helper()
	x := httpDo(t, http.MethodPost, url, withAuth(nil, authz), legacyInit)
	sid := x.header.Get("Mcp-Session-Id")
	if x.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", x.status, x.body)
	}
	h := withAuth(map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}, authz)
	if x := httpDo(t, http.MethodPost, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); x.status != 202 {
		t.Fatalf("initialized: %d", x.status)
	}
	return func(body string) exchange { return httpDo(t, http.MethodPost, url, h, body) }
}

// whoamiTools builds the whoami guest into a tools directory with policy
// (none when "").
func whoamiTools(t *testing.T, policy string) string {
	t.Helper()
	dir := t.TempDir()
	if err := guestbuild.Build(context.Background(), "testdata/whoami", filepath.Join(dir, "whoami.wasm")); err != nil {
		t.Fatal(err)
	}
	if policy != "" {
		if err := os.WriteFile(filepath.Join(dir, "whoami.policy.toml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestGrantsForgedPrincipal: a client's _meta["wasmcp/principal"] never
// reaches a guest: without expose_principal the guest sees no principal,
// with it the host's (bob, no scopes), never the forged alice/admin
// (issue 25 item 6).
func TestGrantsForgedPrincipal(t *testing.T) {
	t.Parallel()
	keys := grantKeys(t)
	forged := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"wasmcp/principal":{"name":"alice","scopes":["admin"]},"WasmCP/Principal":{"name":"alice"}}}}`
	escaped := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"wasmcp\/principal":{"name":"alice"}}}}`
	// The same key twice (once escaped): refused as a repeated member
	// before anything runs (-32600).
	repeated := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"wasmcp/principal":{"name":"alice","scopes":["admin"]},"wasmcp\/principal":{"name":"alice"}}}}`
	// A second _meta in another case: refused before the guest runs (the
	// host and a guest would read different ones).
	twice := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{},"_Meta":{"wasmcp/principal":{"name":"alice"}}}}`
	for _, c := range []struct{ policy, want string }{
		{"", `"text":"anonymous"`},
		{"[access]\nexpose_principal = true\n", `{\"name\":\"bob\",\"scopes\":[]}`},
	} {
		s := startServe(t, "--tools", whoamiTools(t, c.policy), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false", "--auth", "apikey", "--auth-keys-file", keys)
		call := legacySession(t, s.URL, "Bearer bob-key")
		for _, f := range []string{forged, escaped} {
			got := sseData(call(f).body)
			if !strings.Contains(got, c.want) || strings.Contains(got, "alice") {
				t.Fatalf("policy %q: the guest saw %s, want %s", c.policy, got, c.want)
			}
		}
		if got := sseData(call(repeated).body); !strings.Contains(got, "-32600") || strings.Contains(got, "alice") {
			t.Fatalf("policy %q: a repeated _meta key: %s", c.policy, got)
		}
		if got := sseData(call(twice).body); !strings.Contains(got, "-32602") || strings.Contains(got, "alice") {
			t.Fatalf("policy %q: _meta and _Meta: %s", c.policy, got)
		}
	}
}

// TestGrantsSkills: a module's skills, tool and instructions follow its
// [access] grant on every surface: bob (no scope) finds none of them in
// skills/list, resources/list or initialize, and skills/get,
// resources/read and resources/directory/read of them answer as for an
// unknown skill; alice (admin) gets each (issue 25 item 5).
func TestGrantsSkills(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := guestbuild.Build(context.Background(), "testdata/grantskill", filepath.Join(dir, "grantskill.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "grantskill.policy.toml"), []byte("[access]\nscopes = [\"admin\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--tools", dir, "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false", "--auth", "apikey", "--auth-keys-file", grantKeys(t))
	initOf := func(authz string) string {
		return httpDo(t, http.MethodPost, s.URL, withAuth(nil, authz), legacyInit).body
	}
	if got := initOf("Bearer bob-key"); strings.Contains(got, "grantskill") {
		t.Fatalf("bob's initialize names the module: %s", got)
	}
	if got := initOf("Bearer alice-key"); !strings.Contains(got, "the grantskill module's instructions") {
		t.Fatalf("alice's initialize lacks the module's instructions: %s", got)
	}
	alice, bob := legacySession(t, s.URL, "Bearer alice-key"), legacySession(t, s.URL, "Bearer bob-key")
	// (bob's tools/call of the tool: TestGrantsStepUp.)
	req := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	}
	for _, c := range []struct{ method, params, unknown string }{
		{"skills/list", `{}`, ""},
		{"resources/list", `{}`, ""},
		{"tools/list", `{}`, ""},
		{"skills/get", `{"uri":"skill://granted-skill/SKILL.md"}`, `{"uri":"skill://zzzzzzz-skill/SKILL.md"}`},
		{"resources/read", `{"uri":"skill://granted-skill/SKILL.md"}`, `{"uri":"skill://zzzzzzz-skill/SKILL.md"}`},
		{"resources/read", `{"uri":"skill://granted-skill/references/detail.md"}`, `{"uri":"skill://zzzzzzz-skill/references/detail.md"}`},
		{"resources/directory/read", `{"uri":"skill://granted-skill"}`, `{"uri":"skill://zzzzzzz-skill"}`},
		{"resources/directory/read", `{"uri":"skill://granted-skill/references"}`, `{"uri":"skill://zzzzzzz-skill/references"}`},
	} {
		a := sseData(alice(req(c.method, c.params)).body)
		if !strings.Contains(a, "granted") || strings.Contains(a, `"error"`) {
			t.Fatalf("alice's %s %s: %s", c.method, c.params, a)
		}
		b := bob(req(c.method, c.params))
		if c.unknown == "" {
			if strings.Contains(b.body, "granted") {
				t.Fatalf("bob's %s shows the module's item: %s", c.method, b.body)
			}
			continue
		}
		u := bob(req(c.method, c.unknown))
		if strings.ReplaceAll(sseData(b.body), "granted", "zzzzzzz") != sseData(u.body) || b.status != u.status {
			t.Fatalf("bob's %s %s: %d %s; of an unknown one: %d %s", c.method, c.params, b.status, b.body, u.status, u.body)
		}
	}
}

// TestGrantsMetricsOffTheAuthenticatedListener: with --auth on a loopback
// bind, /metrics (which names every tool, a grant-hidden one too, and
// asks for no credential) is not served on the MCP listener, to a caller
// without a credential or with one; the probes stay (issue 25 item 8).
func TestGrantsMetricsOffTheAuthenticatedListener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := guestbuild.Build(context.Background(), "testdata/grantskill", filepath.Join(dir, "grantskill.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "grantskill.policy.toml"), []byte("[access]\nscopes = [\"admin\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--tools", dir, "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false", "--auth", "apikey", "--auth-keys-file", grantKeys(t))
	base := strings.TrimSuffix(s.URL, "/mcp")
	// A call first, so that the tool has its series.
	alice := legacySession(t, s.URL, "Bearer alice-key")
	if x := alice(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"granted_tool","arguments":{}}}`); !strings.Contains(x.body, "granted") {
		t.Fatalf("alice's call: %s", x.body)
	}
	for _, authz := range []string{"", "Bearer bob-key"} {
		x := httpDo(t, http.MethodGet, base+"/metrics", withAuth(nil, authz), "")
		if x.status == 200 || strings.Contains(x.body, "granted_tool") {
			t.Fatalf("/metrics on the authenticated MCP listener (Authorization %q): %d %.300s", authz, x.status, x.body)
		}
	}
	if x := httpDo(t, http.MethodGet, base+"/healthz", nil, ""); x.status != 200 {
		t.Fatalf("/healthz: %d", x.status)
	}
}

// metricsBase is the base URL of the --metrics-addr listener of s, from
// its log.
func metricsBase(t *testing.T, s *served) string {
	t.Helper()
	re := regexp.MustCompile(`msg="serving metrics and probes" url=(http://\S+)/metrics`)
	var base string
	waitFor(t, 10*time.Second, "the metrics listener", func() bool {
		if m := re.FindStringSubmatch(s.Stderr.String()); m != nil {
			base = m[1]
			return true
		}
		return false
	})
	return base
}

// TestGrantsStepUp: a tools/call of a tool whose grant names a scope the
// caller's credential lacks answers 403 with WWW-Authenticate: Bearer
// error="insufficient_scope", scope="admin" (MCP step-up authorization),
// in a legacy session and in a 2026-07-28 request, while tools/list keeps
// hiding it; a tool granted to named principals only stays unknown (no
// scope would help) (issue 25 item 13).
func TestGrantsStepUp(t *testing.T) {
	t.Parallel()
	keys := grantKeys(t)
	build := func(policy string) string {
		dir := t.TempDir()
		if err := guestbuild.Build(context.Background(), "testdata/grantskill", filepath.Join(dir, "grantskill.wasm")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "grantskill.policy.toml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"granted_tool","arguments":{}}}`
	modern := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"granted_tool","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	modernHdr := withAuth(map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "granted_tool"}, "Bearer bob-key")

	s := startServe(t, "--tools", build("[access]\nscopes = [\"admin\"]\n"), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false", "--auth", "apikey", "--auth-keys-file", keys)
	bob := legacySession(t, s.URL, "Bearer bob-key")
	for name, x := range map[string]exchange{"legacy": bob(call), "modern": httpDo(t, http.MethodPost, s.URL, modernHdr, modern)} {
		ch := x.header.Get("WWW-Authenticate")
		if x.status != 403 || !strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="admin"`) ||
			!strings.Contains(ch, `resource_metadata="`) || !strings.Contains(x.body, "Insufficient scope") {
			t.Fatalf("%s: bob's call of a tool needing admin: %d %q %s", name, x.status, ch, x.body)
		}
	}
	if l := bob(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`); strings.Contains(l.body, "granted_tool") {
		t.Fatalf("bob's tools/list shows the tool: %s", l.body)
	}
	if x := legacySession(t, s.URL, "Bearer alice-key")(call); x.status != 200 || !strings.Contains(x.body, "granted") || strings.Contains(x.body, "error") {
		t.Fatalf("alice's call: %d %s", x.status, x.body)
	}

	// Granted to alice by name only: for bob the tool does not exist.
	s = startServe(t, "--tools", build("[access]\nprincipals = [\"alice\"]\n"), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false", "--auth", "apikey", "--auth-keys-file", keys)
	x := legacySession(t, s.URL, "Bearer bob-key")(call)
	if x.status != 200 || x.header.Get("WWW-Authenticate") != "" || !strings.Contains(x.body, "Unknown tool: granted_tool") {
		t.Fatalf("bob's call of a tool granted by name: %d %q %s", x.status, x.header.Get("WWW-Authenticate"), x.body)
	}
}

// TestGrantsSessionsFairShare: at --max-sessions, one principal's new
// sessions end its own idle sessions, never another principal's holding
// fewer: bob's idle session still answers after alice opened three
// (issue 25 item 7).
func TestGrantsSessionsFairShare(t *testing.T) {
	t.Parallel()
	s := startHTTP(t, "--auth", "apikey", "--auth-keys-file", grantKeys(t), "--max-sessions", "2")
	bob := legacySession(t, s.URL, "Bearer bob-key")
	var alice []func(string) exchange
	for i := 0; i < 3; i++ {
		time.Sleep(5 * time.Millisecond) // bob's is the idlest of all
		alice = append(alice, legacySession(t, s.URL, "Bearer alice-key"))
	}
	ping := `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	if x := bob(ping); x.status != 200 {
		t.Fatalf("bob's session after alice's three: %d %s", x.status, x.body)
	}
	if x := alice[2](ping); x.status != 200 {
		t.Fatalf("alice's newest session: %d %s", x.status, x.body)
	}
	if x := alice[0](ping); x.status != 404 {
		t.Fatalf("alice's oldest session: %d, want 404 (hers made room)", x.status)
	}
}
