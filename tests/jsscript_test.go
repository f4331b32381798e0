package tests

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Scripts (issue 29): a .js file in the tools directory is a module run on
// the JavaScript runner (guest-sdk/js/quickjs). These tests hold a script
// to the walls every guest meets — the deadline, the memory cap, a clear
// tool error — and its load errors to a clear message with the file and
// line.

// wallsScript has one tool per wall a call can hit.
const wallsScript = `const { McpServer } = require("wasmcp");
const server = new McpServer({ name: "walls", version: "1.0.0" });
server.registerTool("spin", {}, () => { for (;;) {} });
server.registerTool("grow", {}, () => { let s = "x"; const keep = []; for (;;) { s = s + s; keep.push(s); } });
server.registerTool("recurse", {}, () => { const f = (n) => f(n + 1) + 1; return String(f(0)); });
server.registerTool("never", {}, () => new Promise(() => {}));
server.registerTool("later", {}, () => new Promise((resolve) => setTimeout(() => resolve("later"), 10)));
server.registerTool("fails", {}, async () => { throw new RangeError("out of range"); });
server.registerTool("random", {}, () => crypto.randomUUID() + " " + Math.random());
server.registerTool("logs", {}, () => { console.log("to the log"); return "logged"; });
server.registerTool("logfn", {}, (args, ctx) => { ctx.log("info", () => 1); return "ok"; });
server.registerTool("ties", {}, () => [(2.5).toFixed(0), (1.25).toFixed(1), (1.005).toFixed(2), (-2.5).toFixed(0), (99.5).toPrecision(2), (-9.5).toExponential(0)].join(" "));
`

// jsCall runs wasmcp call on a script and returns its combined output.
func jsCall(t *testing.T, script, tool string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, wasmcpBin, "call", "--cache-dir", compileCache, script, tool, "{}").CombinedOutput()
	return string(out), err
}

func TestScriptWalls(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "walls.js")
	if err := os.WriteFile(script, []byte(wallsScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "walls.policy.toml"), []byte("timeout = \"10s\"\nmemory = \"96MiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		ok   bool
		want string // in the output
	}{
		{"later", true, `"text": "later"`},
		{"spin", false, "deadline"},
		{"grow", false, "memory"},
		{"recurse", false, "RangeError"},
		{"never", false, "the handler's promise never settled"},
		{"fails", false, "RangeError: out of range"},
		{"random", true, `"text": "`},
		{"logs", true, `line="to the log"`},
		// A log of a value JSON cannot encode sends its text (it sent the
		// bytes of "undefined" as a Go slice).
		{"logfn", true, `"data":"() => 1"`},
		// Exact decimal ties round away from zero, as JavaScript says
		// (WebAssembly has no directed rounding modes for printf).
		{"ties", true, `"text": "3 1.3 1.00 -3 1.0e+2 -1e+1"`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			out, err := jsCall(t, script, c.tool)
			if (err == nil) != c.ok {
				t.Errorf("wasmcp call %s: err %v, want ok=%v\n%s", c.tool, err, c.ok, out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("wasmcp call %s: output lacks %q:\n%s", c.tool, c.want, out)
			}
		})
	}
	// Two calls draw different random values: crypto asks the host.
	text := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, `"text": "`) {
				return l
			}
		}
		t.Fatalf("no text in:\n%s", out)
		return ""
	}
	ao, _ := jsCall(t, script, "random")
	bo, _ := jsCall(t, script, "random")
	if a, b := text(ao), text(bo); a == b {
		t.Errorf("crypto.randomUUID or Math.random repeats across calls:\n%s", a)
	}
}

// TestScriptMemoryCap: a script that keeps 1 MiB strings ends at its
// memory cap with an out-of-memory error, long before the deadline (it
// was ended by the 60 s deadline).
func TestScriptMemoryCap(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "strings.js")
	src := `const { McpServer } = require("wasmcp");
const server = new McpServer({ name: "strings", version: "1.0.0" });
server.registerTool("strings", {}, () => { const s = "x".repeat(1 << 20); const keep = []; for (let i = 0; ; i++) keep.push(s + i); });
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "strings.policy.toml"), []byte("timeout = \"60s\"\nmemory = \"64MiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := jsCall(t, script, "strings")
	if err == nil || !strings.Contains(out, "InternalError: out of memory") {
		t.Errorf("wasmcp call strings: err %v, want the out-of-memory error:\n%s", err, out)
	}
}

func TestScriptLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ src, want string }{
		"throws.js": {"const { McpServer } = require(\"wasmcp\");\nnew McpServer({ name: \"t\" });\nthrow new Error(\"no config\");\n",
			"the script's top level threw: throws.js:3: Error: no config"},
		"twice.js": {"const { McpServer } = require(\"wasmcp\");\nconst s = new McpServer({ name: \"t\" });\ns.registerTool(\"a\", {}, () => \"a\");\ns.registerTool(\"a\", {}, () => \"b\");\n",
			"twice.js:4:"},
		"syntax.js": {"const x = ;\n", "syntax.js:1: syntax error"},
		"empty.js":  {"// nothing\n", "the script registers nothing"},
	} {
		t.Run(name, func(t *testing.T) {
			script := filepath.Join(dir, name)
			if err := os.WriteFile(script, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := jsCall(t, script, "a")
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("wasmcp call %s: err %v, want a load error with %q:\n%s", name, err, c.want, out)
			}
		})
	}
}

// TestScriptFetch: fetch() goes through the host's outbound HTTP — the
// policy's allow-list and its secret header, which the script never sees
// — and an await on it settles the handler's promise.
func TestScriptFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Kind", "json")
		fmt.Fprintf(w, `{"token":%t,"method":%q}`, r.Header.Get("X-Token") == "s3cr3t-value", r.Method)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	dir := t.TempDir()
	script := fmt.Sprintf(`const { McpServer } = require("wasmcp");
const server = new McpServer({ name: "getter", version: "1.0.0" });
server.registerTool("get", {}, async () => {
	const resp = await fetch(%q);
	const body = await resp.json();
	return resp.status + " " + resp.headers.get("x-kind") + " " + body.token + " " + body.method + " " + JSON.stringify(resp.headers.get("x-token"));
});
server.registerTool("denied", {}, async () => { await fetch("http://127.0.0.1:1/"); return "reached"; });
`, srv.URL+"/data")
	if err := os.WriteFile(filepath.Join(dir, "getter.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	policy := fmt.Sprintf("[[http.allow]]\nscheme = \"http\"\nhost = \"127.0.0.1\"\nport = %s\nheaders = { X-Token = \"s3cr3t-value\" }\n", u.Port())
	if err := os.WriteFile(filepath.Join(dir, "getter.policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := jsCall(t, filepath.Join(dir, "getter.js"), "get")
	if err != nil || !strings.Contains(out, `"text": "200 json true GET null"`) {
		t.Errorf("get: %v\n%s", err, out)
	}
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("the secret reached the output:\n%s", out)
	}
	out, err = jsCall(t, filepath.Join(dir, "getter.js"), "denied")
	if err == nil || !strings.Contains(out, "fetch http://127.0.0.1:1/") {
		t.Errorf("denied: %v, want a tool error from fetch\n%s", err, out)
	}
}

// TestScriptTypeScript: a .ts file's types are stripped by the sandboxed
// transform guest at load; a TypeScript syntax error is a load error
// naming FILE:LINE:COL, and a script over MaxScriptBytes is refused before
// the transform sees it.
func TestScriptTypeScript(t *testing.T) {
	dir := t.TempDir()
	ok := "import { McpServer } from \"wasmcp\";\ninterface Args { n: number }\nconst s = new McpServer({ name: \"t\", version: \"1\" });\ns.registerTool(\"a\", {}, (_: Args): string => \"typed \" + (1 as number));\n"
	if err := os.WriteFile(filepath.Join(dir, "typed.ts"), []byte(ok), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := jsCall(t, filepath.Join(dir, "typed.ts"), "a"); err != nil || !strings.Contains(out, `"text": "typed 1"`) {
		t.Errorf("typed.ts: %v\n%s", err, out)
	}
	bad := "import { McpServer } from \"wasmcp\";\nconst n: number = (1 +;\n"
	if err := os.WriteFile(filepath.Join(dir, "bad.ts"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := jsCall(t, filepath.Join(dir, "bad.ts"), "a"); err == nil || !regexp.MustCompile(`bad\.ts:2:\d+: `).MatchString(out) {
		t.Errorf("bad.ts: err %v, want a load error naming bad.ts:2:COL:\n%s", err, out)
	}
	huge := "// " + strings.Repeat("x", 4<<20) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "huge.ts"), []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := jsCall(t, filepath.Join(dir, "huge.ts"), "a"); err == nil || strings.Contains(out, `"text"`) {
		t.Errorf("huge.ts: err %v, want it refused:\n%s", err, out)
	} else {
		t.Logf("huge.ts: %s", strings.TrimSpace(out))
	}
}

// TestScriptReload: saving a .ts file in a served tools directory reloads
// that tool — the list changes, and calls answer from the new script.
func TestScriptReload(t *testing.T) {
	dir := t.TempDir()
	src := func(v string) []byte {
		return []byte("import { McpServer } from \"wasmcp\";\nconst s = new McpServer({ name: \"r\", version: \"1\" });\ns.registerTool(\"version\", { description: \"" + v + "\" }, (): string => \"" + v + "\");\n")
	}
	path := filepath.Join(dir, "r.ts")
	if err := os.WriteFile(path, src("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--tools", dir, "--cache-dir", filepath.Join(workDir, "script-reload-cache"))
	c := newStdioClient(t, s)
	call := func() string { return c.request("tools/call", `{"name":"version","arguments":{}}`, nil) }
	if r := call(); !strings.Contains(r, `"text":"one"`) {
		t.Fatalf("first version: %s", r)
	}
	if err := os.WriteFile(path, src("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(3 * time.Minute)
	for {
		select {
		case n := <-c.notes():
			if !strings.Contains(n, "notifications/tools/list_changed") {
				continue
			}
			if l := c.request("tools/list", `{}`, nil); !strings.Contains(l, `"description":"two"`) {
				continue
			}
			if r := call(); !strings.Contains(r, `"text":"two"`) {
				t.Fatalf("listed the new version, called the old: %s", r)
			}
			return
		case <-deadline:
			t.Fatalf("no reload of r.ts within 3 minutes; log:\n%s", s.Stderr)
		}
	}
}
