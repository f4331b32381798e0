package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// The MCP-server guest: tests/testdata/mcpserver is an ordinary MCP server
// written with the official Go SDK (its own go.mod) and its stdio
// transport, built here unmodified with GOOS=wasip1 and served by wasmcp
// serve, which learns its surface at load and plays its client's part of
// the session on every call (abi/README.md, section 10).

var mcpServer built[string]

// mcpServerTools builds the SDK server into a tools directory of its own
// and loads it once with wasmcp inspect, so the compilation cache is warm
// for the servers the tests start (a 14 MB module compiles for a minute
// on a loaded machine).
func mcpServerTools(t *testing.T) string {
	t.Helper()
	return mcpServer.get(t, func() (string, error) {
		dir := filepath.Join(workDir, "mcpserver")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		wasm := filepath.Join(dir, "sdkserver.wasm")
		if err := guestbuild.Build(ctx, "testdata/mcpserver", wasm); err != nil {
			return "", fmt.Errorf("building the SDK server: %w", err)
		}
		out, err := exec.CommandContext(ctx, wasmcpBin, "inspect", "--cache-dir", compileCache, wasm).CombinedOutput()
		mcpServerInspect = string(out)
		if err != nil {
			return "", fmt.Errorf("loading the SDK server: %v\n%s", err, out)
		}
		return dir, nil
	})
}

// mcpServerInspect is wasmcp inspect's output for the SDK server.
var mcpServerInspect string

// TestMCPServerGuestInspect: wasmcp inspect recognises the module as an MCP
// server (no policy file: mode auto) and shows what it learned.
func TestMCPServerGuestInspect(t *testing.T) {
	mcpServerTools(t)
	var out struct {
		Mode        string `json:"mode"`
		Version     string `json:"mcpProtocolVersion"`
		Description struct {
			Name, Instructions string
			Tools              []struct {
				Name         string
				OutputSchema json.RawMessage
			}
			Resources         []struct{ URI string }
			ResourceTemplates []struct{ URITemplate string }
			Prompts           []struct{ Name string }
		}
		Policy struct{ Mode string }
	}
	if err := json.Unmarshal([]byte(mcpServerInspect), &out); err != nil {
		t.Fatalf("inspect output: %v\n%s", err, mcpServerInspect)
	}
	if out.Mode != "mcp-server" || out.Version != "2025-06-18" || out.Policy.Mode != "" {
		t.Fatalf("mode %q, revision %q, policy mode %q; want mcp-server, 2025-06-18 and none (no policy file: auto)", out.Mode, out.Version, out.Policy.Mode)
	}
	d := out.Description
	var tools []string
	for _, tl := range d.Tools {
		tools = append(tools, tl.Name)
		if (tl.Name == "echo" || tl.Name == "count") != (len(tl.OutputSchema) > 0) {
			t.Errorf("tool %s: outputSchema %s", tl.Name, tl.OutputSchema)
		}
	}
	if d.Name != "sdkserver" || d.Instructions != "A server written with the official Go SDK." ||
		strings.Join(tools, ",") != "ask,count,echo,progress" ||
		len(d.Resources) != 1 || d.Resources[0].URI != "sdk://greeting" ||
		len(d.ResourceTemplates) != 1 || d.ResourceTemplates[0].URITemplate != "sdk://shout/{word}" ||
		len(d.Prompts) != 1 || d.Prompts[0].Name != "greet" {
		t.Fatalf("description: %+v", d)
	}
}

// TestMCPServerGuestStdio drives the SDK server through wasmcp serve --stdio
// as a 2025-11-25 client: every kind of item, a structured result, a
// second call that sees none of the first's state, elicitation, logging
// and progress relayed.
func TestMCPServerGuestStdio(t *testing.T) {
	s := startServe(t, "--tools", mcpServerTools(t), "--stdio", "--cache-dir", compileCache, "--watch=false")
	// initialize waits for the initial load at most protocol.InitializeWait
	// and carries the instructions of the modules loaded by then: wait for
	// the load (a cold cache compiles the module for seconds).
	waitFor(t, 2*time.Minute, "the initial load", func() bool { return strings.Contains(s.Stderr.String(), "modules loaded") })
	r := newRawSession(t, s)
	r.answer["elicitation/create"] = func(p json.RawMessage) any {
		if !strings.Contains(string(p), `"message":"Who are you?"`) {
			t.Errorf("elicitation params: %s", p)
		}
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}
	}
	init := r.result("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
	})
	if !strings.Contains(init["instructions"].(string), "A server written with the official Go SDK.") {
		t.Errorf("instructions: %v", init["instructions"])
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	res := r.result("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "héllo"}})
	if sc, _ := res["structuredContent"].(map[string]any); sc["text"] != "héllo" || sc["length"] != float64(6) || res["isError"] == true {
		t.Fatalf("echo: %v", res)
	}
	for i := range 2 {
		res := r.result("tools/call", map[string]any{"name": "count", "arguments": map[string]any{}})
		if sc, _ := res["structuredContent"].(map[string]any); sc["calls"] != float64(1) {
			t.Fatalf("count, call %d: %v (a call must see no state of another)", i+1, res)
		}
	}
	if got := r.toolText("ask", map[string]any{"question": "Who are you?"}, nil); got != "hello Ada" {
		t.Fatalf("ask: %q", got)
	}
	logs := r.notifications("notifications/message")
	if len(logs) != 1 || !strings.Contains(logs[0]["params"].(map[string]any)["data"].(string), "asking: Who are you?") {
		t.Fatalf("log notifications: %v", logs)
	}
	if got := r.toolText("progress", map[string]any{"steps": 3}, map[string]any{"progressToken": "tok"}); got != "done 3" {
		t.Fatalf("progress: %q", got)
	}
	waitFor(t, 10*time.Second, "three progress notifications", func() bool {
		return len(r.notifications("notifications/progress")) == 3
	})
	for _, n := range r.notifications("notifications/progress") {
		if n["params"].(map[string]any)["progressToken"] != "tok" {
			t.Errorf("progress: %v", n)
		}
	}
	// Arguments that do not match the schema the server declared never
	// reach it.
	bad := r.result("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": 3}})
	if bad["isError"] != true {
		t.Errorf("echo with a number: %v", bad)
	}

	read := r.result("resources/read", map[string]any{"uri": "sdk://greeting"})
	if c := read["contents"].([]any)[0].(map[string]any); c["text"] != "hello from the Go SDK" {
		t.Fatalf("resources/read: %v", read)
	}
	read = r.result("resources/read", map[string]any{"uri": "sdk://shout/hey"})
	if c := read["contents"].([]any)[0].(map[string]any); c["text"] != "HEY" {
		t.Fatalf("resources/read of a template: %v", read)
	}
	p := r.result("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
	msg := p["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)
	if msg["text"] != "Say hello to Ada." {
		t.Fatalf("prompts/get: %v", p)
	}
}

// TestMCPServerGuestHTTP calls the SDK server over Streamable HTTP as a
// 2026-07-28 client, which it never sees: the host speaks the revision it
// agreed with the server, and turns the server's elicitation into the
// multi round-trip exchange (the server runs again from the start, and
// its request, with the same id, gets the client's answer).
func TestMCPServerGuestHTTP(t *testing.T) {
	s := startServe(t, "--tools", mcpServerTools(t), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false")
	call := func(name, params string) map[string]any {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
		ex := httpDo(t, "POST", s.URL, modernHeaders("tools/call", name), body)
		var m map[string]any
		if err := json.Unmarshal([]byte(ex.body), &m); err != nil || ex.status != 200 {
			t.Fatalf("%s: %d %q", name, ex.status, ex.body)
		}
		res, ok := m["result"].(map[string]any)
		if !ok {
			t.Fatalf("%s: %v", name, m)
		}
		return res
	}
	res := call("echo", `{"name":"echo","arguments":{"text":"over http"},"_meta":`+modernMeta("")+`}`)
	if sc, _ := res["structuredContent"].(map[string]any); sc["text"] != "over http" || res["resultType"] != "complete" {
		t.Fatalf("echo: %v", res)
	}
	for i := range 2 {
		res := call("count", `{"name":"count","arguments":{},"_meta":`+modernMeta("")+`}`)
		if sc, _ := res["structuredContent"].(map[string]any); sc["calls"] != float64(1) {
			t.Fatalf("count, call %d: %v", i+1, res)
		}
	}
	meta := `{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	r1 := call("ask", `{"name":"ask","arguments":{"question":"Who are you?"},"_meta":`+meta+`}`)
	reqs, _ := r1["inputRequests"].(map[string]any)
	if r1["resultType"] != "input_required" || len(reqs) != 1 {
		t.Fatalf("ask, round 1: %v", r1)
	}
	var key string
	for k, v := range reqs {
		key = k
		if v.(map[string]any)["method"] != "elicitation/create" {
			t.Fatalf("ask, round 1: %v", r1)
		}
	}
	state, _ := json.Marshal(r1["requestState"])
	r2 := call("ask", `{"name":"ask","arguments":{"question":"Who are you?"},"_meta":`+meta+
		`,"requestState":`+string(state)+`,"inputResponses":{"`+key+`":{"action":"accept","content":{"name":"Ada"}}}}`)
	if r2["resultType"] != "complete" || firstText(t, r2) != "hello Ada" {
		t.Fatalf("ask, round 2: %v", r2)
	}
}

// TestMCPServerGuestPolicyMode: mode = "wasmcp" in the policy refuses to
// run the module as an MCP server, and the load error says why.
func TestMCPServerGuestPolicyMode(t *testing.T) {
	src := filepath.Join(mcpServerTools(t), "sdkserver.wasm")
	dir := t.TempDir()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(dir, "sdkserver.wasm")
	if err := os.WriteFile(wasm, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sdkserver.policy.toml"), []byte("mode = \"wasmcp\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, wasmcpBin, "inspect", "--cache-dir", compileCache, wasm).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "describe failed") {
		t.Fatalf("inspect with mode = \"wasmcp\": err %v\n%s", err, out)
	}
}
