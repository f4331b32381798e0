package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// TestDocTypeScript runs docs/typescript.md as a newcomer would: the shell
// blocks of "Your first tool" with bash (HOME a fresh directory, wasmcp on
// PATH, hello.ts written where the first block goes), its Claude Desktop
// configuration parsed for `serve --tools DIR`; then every ```ts block of
// the page (each opens with "// FILE.ts") is written into one tools
// directory, with the page's ```toml block as status.policy.toml (plus a
// rule for the test's own HTTP server), served by wasmcp serve over stdio
// and called: every tool, resource and prompt the blocks register is
// listed, and each file's tools answer what the page says they do.
func TestDocTypeScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is needed to run the shell blocks of docs/typescript.md")
	}
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "typescript.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(page)
	var files = map[string]string{} // FILE.ts -> source
	var order []string
	var toml []string
	for _, m := range regexp.MustCompile("(?ms)^```(\\w*)\n(.*?)^```$").FindAllStringSubmatch(doc, -1) {
		switch m[1] {
		case "ts":
			first, _, _ := strings.Cut(m[2], "\n")
			name, ok := strings.CutPrefix(first, "// ")
			if !ok || !strings.HasSuffix(name, ".ts") || strings.ContainsAny(name, "/ ") {
				t.Fatalf("a ts block of docs/typescript.md does not open with // FILE.ts:\n%s", m[2])
			}
			if _, dup := files[name]; dup {
				t.Fatalf("docs/typescript.md has two blocks for %s", name)
			}
			files[name] = m[2]
			order = append(order, name)
		case "toml":
			toml = append(toml, m[2])
		}
	}
	if files["hello.ts"] == "" || len(toml) != 1 {
		t.Fatalf("docs/typescript.md should hold hello.ts and one toml block (status.policy.toml); found %v and %d", order, len(toml))
	}

	// "Your first tool", as written.
	first := readmeSection(t, doc, "Your first tool")
	var langs []string
	for _, b := range first {
		langs = append(langs, b.lang)
	}
	if strings.Join(langs, " ") != "sh ts sh json" {
		t.Fatalf("docs/typescript.md, \"Your first tool\", should hold sh (directory), ts (hello.ts), sh (check, call), json (Claude Desktop); found %v", first)
	}
	home := t.TempDir()
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(wasmcpBin, filepath.Join(bin, "wasmcp")); err != nil {
		t.Fatal(err)
	}
	const delim = "TYPESCRIPT_DOC_BLOCK"
	script := "set -euo pipefail\n" + first[0].text +
		"cat > hello.ts <<'" + delim + "'\n" + first[1].text + delim + "\n" + first[2].text
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the blocks of \"Your first tool\" failed: %v\nscript:\n%s\noutput:\n%s", err, script, out)
	}
	if !strings.Contains(string(out), "Hello, Ada!") || !strings.Contains(string(out), "greet") {
		t.Fatalf("wasmcp check and call of hello.ts did not list greet and answer Hello, Ada!:\n%s", out)
	}
	var desktop struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(first[3].text), &desktop); err != nil {
		t.Fatalf("the Claude Desktop configuration is not JSON: %v", err)
	}
	if s, ok := desktop.MCPServers["wasmcp"]; !ok || len(s.Args) != 3 || s.Args[0] != "serve" || s.Args[1] != "--tools" || !strings.HasSuffix(s.Command, "/wasmcp") {
		t.Fatalf("the Claude Desktop configuration does not run wasmcp serve --tools DIR: %+v", desktop)
	}

	// Every block, served.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "a header of another rule reached this host", http.StatusForbidden)
			return
		}
		fmt.Fprint(w, "twelve bytes")
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	t.Setenv("GITHUB_TOKEN", "doc-test-token")
	tools := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	policy := toml[0] + fmt.Sprintf("\n[[http.allow]]\nscheme = \"http\"\nhost = \"127.0.0.1\"\nport = %s\n", port)
	if err := os.WriteFile(filepath.Join(tools, "status.policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--tools", tools, "--stdio", "--cache-dir", compileCache, "--watch=false", "--snapshot-timeout", "2m")
	r := newRawSession(t, s)
	r.answer["elicitation/create"] = func(json.RawMessage) any {
		return map[string]any{"action": "accept", "content": map[string]any{"ok": true}}
	}
	r.result("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "doc", "version": "1"},
	})
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// Every name the blocks register is listed.
	listed := map[string]bool{}
	for method, key := range map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/templates/list": "resourceTemplates"} {
		res := r.result(method, map[string]any{})
		items, _ := res[key].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			n, _ := m["name"].(string)
			listed[key+":"+n] = true
		}
	}
	kinds := map[string]string{"registerTool": "tools", "registerPrompt": "prompts", "registerResource": "resourceTemplates"}
	for _, name := range order {
		for _, m := range regexp.MustCompile(`server\.(registerTool|registerPrompt|registerResource)\("([^"]+)"`).FindAllStringSubmatch(files[name], -1) {
			if !listed[kinds[m[1]]+":"+m[2]] {
				t.Errorf("%s registers %s %q, which wasmcp does not list (%s):\n%s", name, m[1], m[2], kinds[m[1]], s.Stderr.String())
			}
		}
	}

	// What each file's tools answer.
	called := map[string]bool{}
	call := func(file, tool string, args map[string]any, meta map[string]any, want string) {
		t.Helper()
		called[file] = true
		if got := r.toolText(tool, args, meta); !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("%s: %s answered %q, want %s", file, tool, got, want)
		}
	}
	call("hello.ts", "greet", map[string]any{"name": "Ada"}, nil, `^Hello, Ada!$`)
	call("notes.ts", "note", map[string]any{"key": "welcome"}, nil, `^Notes live in the script\.$`)
	call("notes.ts", "keys", map[string]any{}, nil, `"welcome"`)
	if res := r.result("tools/call", map[string]any{"name": "note", "arguments": map[string]any{"key": "nope"}}); res["isError"] != true || !strings.Contains(fmt.Sprint(res), "no note nope") {
		t.Errorf("notes.ts: note of a missing key answered %v, want a tool error", res)
	}
	if res := r.result("resources/read", map[string]any{"uri": "note://welcome"}); !strings.Contains(fmt.Sprint(res), "Notes live in the script.") {
		t.Errorf("notes.ts: note://welcome read %v", res)
	}
	if res := r.result("prompts/get", map[string]any{"name": "summarize", "arguments": map[string]any{"key": "welcome"}}); !strings.Contains(fmt.Sprint(res), "Summarize this note: Notes live in the script.") {
		t.Errorf("notes.ts: the prompt summarize gave %v", res)
	}
	call("steps.ts", "count", map[string]any{"n": 3}, map[string]any{"progressToken": "doc"}, `^counted to 3$`)
	if n := len(r.notifications("notifications/progress")); n != 3 {
		t.Errorf("steps.ts: count 3 sent %d progress notifications, want 3", n)
	}
	call("steps.ts", "confirm", map[string]any{}, nil, `^went on$`)
	call("status.ts", "status", map[string]any{"url": srv.URL + "/"}, nil, `^200 12 bytes$`)
	call("status.ts", "dice", map[string]any{}, nil, `^[1-6] and [1-6], rolled \d{4}-\d\d-\d\dT`)
	for _, name := range order {
		if !called[name] {
			t.Errorf("docs/typescript.md's %s is served but no tool of it is called by this test", name)
		}
	}
}
