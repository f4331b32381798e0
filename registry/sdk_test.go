package registry

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/testkit/npmtest"
)

// zodVersion is the zod the SDK tests install (docs/typescript.md names it).
const zodVersion = "zod@4.6.7"

// sdkServer is a server written for the official TypeScript SDK, as its
// README writes one.
const sdkServer = `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
const server = new McpServer({ name: "demo", version: "1.0.0" });
server.registerTool("add", { title: "Add", description: "Add two numbers",
  inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
await server.connect(new StdioServerTransport());
`

// sdkDir is a tools directory holding zod in node_modules and the files
// given.
func sdkDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	npmtest.CopyInto(t, npmtest.Modules(t, zodVersion), dir)
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sdkEngine is the engine of the SDK tests. Its snapshot deadline is
// 5 minutes: zod's initialisation runs in wazero's interpreter, seconds of
// guest CPU normally, past the default minute under the race detector
// (which slows the interpreter, Go code, several times over).
func sdkEngine(t testing.TB) *host.Engine {
	t.Helper()
	e, err := host.NewEngine(host.Config{CacheDir: cacheDir, Logger: slog.New(slog.DiscardHandler), InstrumentLoops: true,
		SnapshotTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// callText calls a tool and answers its first text and isError.
func callText(t testing.TB, m *host.Module, params string) (string, bool) {
	t.Helper()
	r, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(params), nil)
	if err != nil || r.Error != nil {
		t.Fatalf("call %s: %v %v", params, err, r)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("call %s answered %s", params, r.Result)
	}
	return res.Content[0].Text, res.IsError
}

// TestSDKServer: a server written for the official SDK, with zod in
// node_modules beside it, loads unchanged: its zod shape is its JSON
// Schema, a call gets the parsed arguments, and a bad argument is the
// tool error the SDK gives, with zod's message; the rest of the surface
// (sdkSurface) behaves as the SDK's.
func TestSDKServer(t *testing.T) {
	useRunner(t)
	// One script (a load evaluates zod in the snapshot run: seconds).
	dir := sdkDir(t, map[string]string{"demo.ts": sdkServer + sdkSurface})
	m, err := LoadFile(context.Background(), sdkEngine(t), filepath.Join(dir, "demo.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if used, why := m.Snapshot(); !used {
		t.Fatalf("the bundle runs without a snapshot: %s", why)
	}
	d := m.Description()
	if len(d.Tools) < 1 || d.Tools[0].Name != "add" || d.Tools[0].Title != "Add" {
		t.Fatalf("tools = %+v", d.Tools)
	}
	var schema struct {
		Type       string                       `json:"type"`
		Properties map[string]map[string]string `json:"properties"`
		Required   []string                     `json:"required"`
	}
	if err := json.Unmarshal(d.Tools[0].InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["a"]["type"] != "number" || schema.Properties["b"]["type"] != "number" || len(schema.Required) != 2 {
		t.Fatalf("inputSchema = %s", d.Tools[0].InputSchema)
	}
	if text, isErr := callText(t, m, `{"name":"add","arguments":{"a":1,"b":2}}`); text != "3" || isErr {
		t.Fatalf("add(1, 2) = %q (isError %v)", text, isErr)
	}
	text, isErr := callText(t, m, `{"name":"add","arguments":{"a":"one","b":2}}`)
	if !isErr || !strings.Contains(text, "Input validation error: Invalid arguments for tool add") ||
		!strings.Contains(text, "expected number, received string at a") {
		t.Fatalf("add(\"one\", 2) = %q (isError %v), want the SDK's validation error with zod's message", text, isErr)
	}
	// The rest of the surface behaves as the SDK's.
	d = m.Description()
	if d.Name != "demo" || d.Version != "1.0.0" || len(d.Tools) != 7 || len(d.Resources) != 1 || len(d.ResourceTemplates) != 1 || len(d.Prompts) != 1 {
		t.Fatalf("description = %+v", d)
	}
	tool := map[string]string{}
	for _, tl := range d.Tools {
		b, _ := json.Marshal(tl)
		tool[tl.Name] = string(b)
	}
	for name, want := range map[string][]string{
		"old_plain":     {`"inputSchema":{"type":"object","properties":{}}`},
		"old_described": {`"description":"Says hi."`, `"readOnlyHint":true`, `"who":{"type":"string","description":"whom"}`},
		"obj":           {`"n":{"type":"integer","minimum":1`},
		"typed":         {`"outputSchema":{`, `"len":{"type":"number"}`},
	} {
		for _, w := range want {
			if !strings.Contains(tool[name], w) {
				t.Errorf("tool %s = %s, want %s in it", name, tool[name], w)
			}
		}
	}
	if p, _ := json.Marshal(d.Prompts[0]); !strings.Contains(string(p), `"arguments":[{"name":"code","required":true},{"name":"lang"}]`) {
		t.Errorf("prompt = %s", p)
	}
	for params, want := range map[string]struct {
		text  string
		isErr bool
	}{
		`{"name":"old_plain","arguments":{}}`:                {"plain function", false},
		`{"name":"old_described","arguments":{"who":"ada"}}`: {"hi ada", false},
		`{"name":"obj","arguments":{"n":2}}`:                 {"n=2 auth=undefined", false},
		`{"name":"obj","arguments":{"n":0}}`:                 {"MCP error -32602: Input validation error: Invalid arguments for tool obj: Too small: expected number to be >=1 at n", true},
		`{"name":"typed","arguments":{"k":"abc"}}`:           {"abc", false},
		`{"name":"typed","arguments":{"k":"bad"}}`:           {"Output validation error: Tool typed has an output schema but no structured content was provided", true},
		`{"name":"fails","arguments":{}}`:                    {"MCP error -32603: it broke", true},
	} {
		text, isErr := callText(t, m, params)
		if !strings.Contains(text, want.text) || isErr != want.isErr {
			t.Errorf("%s = %q (isError %v), want %q (isError %v)", params, text, isErr, want.text, want.isErr)
		}
	}
	for params, want := range map[string]string{
		`{"uri":"docs://readme"}`: `"text":"read docs:"`,
		`{"uri":"users://42"}`:    `"text":"user 42"`,
	} {
		r, err := m.Call(context.Background(), abi.MethodResourceRead, []byte(params), nil)
		if err != nil || r.Error != nil || !strings.Contains(string(r.Result), want) {
			t.Errorf("read %s = %v %v, want %s", params, r, err, want)
		}
	}
	// extra's notifications and requests reach the client.
	peer := &sdkPeer{}
	r, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(`{"name":"talk","arguments":{},"_meta":{"progressToken":"t"}}`), peer)
	if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "talked accept") {
		t.Errorf("talk = %v %v", r, err)
	}
	if got := strings.Join(peer.seen, "\n"); !strings.Contains(got, `notifications/progress {"progressToken":"t","progress":1,"total":2}`) ||
		!strings.Contains(got, `notifications/message {"level":"info","data":"from extra"}`) ||
		!strings.Contains(got, `notifications/message {"level":"warning","data":"from server"}`) ||
		!strings.Contains(got, `elicitation/create {"message":"go on?"`) {
		t.Errorf("the client saw:\n%s", got)
	}
	r, err = m.Call(context.Background(), abi.MethodPromptsGet, []byte(`{"name":"review","arguments":{"code":"x = 1"}}`), nil)
	if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "Review: x = 1") {
		t.Errorf("prompts/get = %v %v", r, err)
	}
}

// sdkPeer is the client of a call: it records what it is sent and
// accepts every elicitation.
type sdkPeer struct {
	mu   sync.Mutex
	seen []string
}

func (p *sdkPeer) Notify(_ context.Context, method string, params []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, method+" "+string(params))
}

func (p *sdkPeer) Request(_ context.Context, method string, params []byte) ([]byte, error) {
	p.Notify(context.Background(), method, params)
	return []byte(`{"action":"accept","content":{}}`), nil
}

// sdkSurface, appended to sdkServer, uses the rest of the SDK's server surface a script has: the
// older tool() forms, a zod object as inputSchema, a tool without one
// (its callback gets extra), an outputSchema, resources (fixed and a
// ResourceTemplate), a prompt with an argsSchema, McpError, and
// sendLoggingMessage at the top level.
const sdkSurface = `import { ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
server.tool("old_plain", async (extra) => ({ content: [{ type: "text", text: "plain " + typeof extra.sendNotification }] }));
server.tool("old_described", "Says hi.", { who: z.string().describe("whom") }, { readOnlyHint: true },
  async ({ who }) => ({ content: [{ type: "text", text: "hi " + who }] }));
server.registerTool("obj", { inputSchema: z.object({ n: z.number().int().min(1) }) },
  async ({ n }, extra) => ({ content: [{ type: "text", text: "n=" + n + " auth=" + String(extra.authInfo) }] }));
server.registerTool("typed", { inputSchema: { k: z.string() }, outputSchema: { k: z.string(), len: z.number() } },
  async ({ k }) => k === "bad" ? { content: [{ type: "text", text: "no structure" }] }
    : { content: [{ type: "text", text: k }], structuredContent: { k, len: k.length } });
server.registerTool("fails", {}, async () => { throw new McpError(ErrorCode.InternalError, "it broke"); });
server.registerResource("readme", "docs://readme", { mimeType: "text/plain" },
  async (uri) => ({ contents: [{ uri: uri.href, text: "read " + uri.protocol + uri.pathname }] }));
server.registerResource("user", new ResourceTemplate("users://{id}", { list: undefined }), {},
  async (uri, { id }) => ({ contents: [{ uri: uri.href, text: "user " + id }] }));
server.registerPrompt("review", { description: "Review code", argsSchema: { code: z.string(), lang: z.string().optional() } },
  ({ code }) => ({ messages: [{ role: "user", content: { type: "text", text: "Review: " + code } }] }));
server.registerTool("talk", {}, async (extra) => {
  await extra.sendNotification({ method: "notifications/progress", params: { progressToken: "t", progress: 1, total: 2 } });
  await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: "from extra" } });
  await server.server.sendLoggingMessage({ level: "warning", data: "from server" });
  const r = await extra.sendRequest({ method: "elicitation/create", params: { message: "go on?", requestedSchema: { type: "object", properties: {} } } }, undefined);
  return { content: [{ type: "text", text: "talked " + r.action }] };
});
await server.sendLoggingMessage({ level: "info", data: "loaded" });
`

// TestSDKTopLevel: a bundle's top level may await; a rejection there, or
// an await nothing settles, fails the load with what happened.
func TestSDKTopLevel(t *testing.T) {
	useRunner(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, nodeModules), 0o755); err != nil {
		t.Fatal(err)
	}
	e := sdkEngine(t)
	for src, want := range map[string]string{
		`import { McpServer } from "wasmcp";
const s = new McpServer({ name: "a" });
await Promise.resolve();
s.registerTool("late", {}, () => "registered after an await");`: "",
		`import { McpServer } from "wasmcp";
new McpServer({ name: "b" });
await Promise.reject(new RangeError("top-level boom"));`: "RangeError: top-level boom",
		`import { McpServer } from "wasmcp";
new McpServer({ name: "c" });
await new Promise(() => {});`: "the script's top level never finished",
	} {
		p := filepath.Join(dir, "top.ts")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadFile(context.Background(), e, p)
		if want == "" {
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if text, _ := callText(t, m, `{"name":"late","arguments":{}}`); text != "registered after an await" {
				t.Fatalf("late = %q", text)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
}

// TestSDKBundleSeesNodeModulesEdits: a bundle is cached by the hash of
// every file it read, so an edit in node_modules (which no watch sees) is
// loaded on the next reload (SIGHUP), though the script did not change.
func TestSDKBundleSeesNodeModulesEdits(t *testing.T) {
	useRunner(t)
	f := newFixture(t, WatchOptions{Settle: 20 * time.Millisecond})
	lib := filepath.Join(f.dir, nodeModules, "greeting", "index.js")
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lib, []byte(`export const greeting = "hello v1";`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.deploy("greet.ts", []byte(`import { McpServer } from "wasmcp";
import { greeting } from "greeting";
new McpServer({ name: "greet" }).registerTool("greet", {}, () => greeting);
`))
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute) // the first load compiles the runner
		for got := f.call("greet"); !strings.Contains(got, want); got = f.call("greet") {
			if time.Now().After(deadline) {
				t.Fatalf("greet never answered %q; last: %s", want, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait("hello v1")
	if err := os.WriteFile(lib, []byte(`export const greeting = "hello v2";`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	wait("hello v2")
}

// TestSDKBundleSeesPackageJSONEdits: a reload after a package's
// package.json changed its "main" bundles the script again: the
// manifests esbuild read to find a file are inputs of the bundle too.
func TestSDKBundleSeesPackageJSONEdits(t *testing.T) {
	useRunner(t)
	f := newFixture(t, WatchOptions{Settle: 20 * time.Millisecond})
	pkg := filepath.Join(f.dir, nodeModules, "greeting")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"package.json": `{"main": "a.js"}`,
		"a.js":         `export const greeting = "hello a";`,
		"b.js":         `export const greeting = "hello b";`,
	} {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.deploy("greet.ts", []byte(`import { McpServer } from "wasmcp";
import { greeting } from "greeting";
new McpServer({ name: "greet" }).registerTool("greet", {}, () => greeting);
`))
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute) // the first load compiles the runner
		for got := f.call("greet"); !strings.Contains(got, want); got = f.call("greet") {
			if time.Now().After(deadline) {
				t.Fatalf("greet never answered %q; last: %s", want, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait("hello a")
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"main": "b.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for got := f.call("greet"); !strings.Contains(got, "hello b"); got = f.call("greet") {
		if time.Now().After(deadline) {
			t.Fatalf("after package.json's main moved to b.js and a reload, greet answers %s", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSDKBundleConfined: a script importing a file outside the tools
// directory is refused at load, saying so (internal/tstransform's
// TestBundleConfined has every way of trying).
func TestSDKBundleConfined(t *testing.T) {
	useRunner(t)
	outer := t.TempDir()
	dir := filepath.Join(outer, "tools")
	if err := os.MkdirAll(filepath.Join(dir, nodeModules), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outer, "secret.js"), []byte(`export const s = "SECRET-OUTSIDE";`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "escape.ts")
	if err := os.WriteFile(p, []byte(`import { s } from "../secret.js";
import { McpServer } from "wasmcp";
new McpServer({ name: "escape" }).registerTool("s", {}, () => s);
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(context.Background(), sdkEngine(t), p)
	if err == nil || !strings.Contains(err.Error(), `"../secret.js" is refused: it is outside the tools directory`) || strings.Contains(err.Error(), "SECRET-OUTSIDE") {
		t.Fatalf("load: %v, want the import refused", err)
	}
}

// sdkEcho is BenchmarkScriptEcho's echo written for the official SDK.
const sdkEcho = `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
const server = new McpServer({ name: "echo", version: "1.0.0" });
server.registerTool("echo", { description: "Returns its text.", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text }] }));
`

// BenchmarkScriptEchoSDK is BenchmarkScriptEcho's call of an echo written
// for the official SDK (zod in node_modules, the shim's McpServer): what
// the bundle's larger snapshot and zod's parse add per call. Side by side:
//
//	go test ./registry -run '^$' -bench 'ScriptEcho' -benchtime 200x -benchmem
func BenchmarkScriptEchoSDK(b *testing.B) {
	useRunner(b)
	dir := sdkDir(b, map[string]string{"echo.ts": sdkEcho})
	m, err := LoadFile(context.Background(), sdkEngine(b), filepath.Join(dir, "echo.ts"))
	if err != nil {
		b.Fatal(err)
	}
	if used, why := m.Snapshot(); !used {
		b.Fatalf("the script runs without a snapshot: %s", why)
	}
	params := []byte(`{"name":"echo","arguments":{"text":"hello"}}`)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i++ {
		r, err := m.Call(context.Background(), abi.MethodToolsCall, params, nil)
		if err != nil || r.Error != nil {
			b.Fatalf("call: %v %v", err, r)
		}
		if i == 0 && !strings.Contains(string(r.Result), `"text":"hello"`) {
			b.Fatalf("echo answered %s", r.Result)
		}
	}
	if cpu > 0 {
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
	b.ReportMetric(float64(m.Footprint().Snapshot), "snapshot-bytes")
}
