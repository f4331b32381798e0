package registry

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
)

// TestHostileScriptValues: a script throwing or answering what JSON cannot
// carry (a Symbol, a getter that throws, a cycle, a BigInt, a Proxy), or
// leaving a storm of timers or microtasks, gets a clear tool error (one
// that says what happened: it said "never settled") or an answer, never a
// crash or a hang, and the next call of the same script starts fresh
// (globalThis kept nothing).
func TestHostileScriptValues(t *testing.T) {
	useRunner(t)
	dir := t.TempDir()
	e, err := host.NewEngine(host.Config{CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), InstrumentLoops: true,
		SnapshotTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	src := `const { McpServer } = require("wasmcp");
const server = new McpServer({ name: "hostile", version: "1.0.0" });
server.registerTool("count", {}, () => { globalThis.n = (globalThis.n || 0) + 1; return "count " + globalThis.n; });
server.registerTool("symbol", {}, () => { throw Symbol("s"); });
server.registerTool("badstring", {}, () => { throw { toString() { throw new Error("no string"); } }; });
server.registerTool("proxy", {}, () => { throw new Proxy({}, { get() { throw new Error("trap"); }, getPrototypeOf() { throw new Error("trap"); } }); });
server.registerTool("rejectundef", {}, () => Promise.reject(undefined));
server.registerTool("getter", {}, () => ({ content: [{ type: "text", get text() { throw new Error("getter"); } }] }));
server.registerTool("cycle", {}, () => { const o = { content: [] }; o.content.push({ type: "text", text: "x", self: o }); return o; });
server.registerTool("bigint", {}, () => ({ content: [{ type: "text", text: "x" }], structuredContent: { n: 10n } }));
server.registerTool("tojson", {}, () => ({ toJSON() { throw new Error("toJSON"); } }));
server.registerTool("timers", {}, () => { for (let i = 0; i < 20000; i++) setTimeout(() => {}, i % 1000); return "timers"; });
server.registerTool("interval", {}, () => { setInterval(() => { globalThis.x = (globalThis.x || 0) + 1; }, 0); return "interval"; });
server.registerTool("microstorm", {}, () => { const f = () => Promise.resolve().then(f); f(); return "micro"; });
server.registerTool("big", {}, () => "x".repeat(40 << 20));
`
	script := filepath.Join(dir, "hostile.js")
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// A 20 s call deadline: the endless cases end well within the 30 s the
	// loop below allows, and "big" meets its output cap first even under
	// the race detector on a loaded machine (at 5 s it met the deadline in
	// a CI run).
	if err := os.WriteFile(filepath.Join(dir, "hostile.policy.toml"), []byte("timeout = \"20s\"\nmemory = \"128MiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadFile(context.Background(), e, script)
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		r, err := m.Call(ctx, abi.MethodToolsCall, []byte(`{"name":"`+tool+`","arguments":{}}`), nil)
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("%s took %s", tool, took)
		}
		if err != nil {
			return "", err
		}
		if r.Error != nil {
			return string(r.Error.Message), nil
		}
		s := string(r.Result)
		if len(s) > 300 {
			s = s[:300] + "..."
		}
		return s, nil
	}
	for _, c := range []struct{ tool, want string }{
		{"symbol", "Symbol(s)"},
		{"badstring", "the handler failed with a value that has no text"},
		{"proxy", "the handler failed with a value that has no text"},
		{"rejectundef", "the handler failed without a reason"},
		{"getter", "the handler's result cannot be sent as JSON: getter"},
		{"cycle", "the handler's result cannot be sent as JSON: TypeError"},
		{"bigint", "the handler's result cannot be sent as JSON: TypeError"},
		{"tojson", "toJSON"},
		{"timers", `"text":"timers"`},
		{"interval", `"text":"interval"`},
		{"big", "wrote more than"},
		// An endless chain of microtasks is a spin: the deadline ends it
		// (or, first, the memory cap its chain of promises reaches).
		{"microstorm", ""},
	} {
		tool := c.tool
		out, err := call(tool)
		if err != nil {
			out = err.Error()
		}
		ok := strings.Contains(out, c.want)
		if c.want == "" {
			ok = strings.Contains(out, "deadline") || strings.Contains(out, "memory") || strings.Contains(out, "micro")
		}
		if !ok {
			t.Errorf("%s answered %q, want it to say %q", tool, out, c.want)
		}
		got, err := call("count")
		if err != nil || !strings.Contains(got, "count 1") {
			t.Fatalf("after %s, count answered %q %v, want a fresh count 1", tool, got, err)
		}
	}
}
