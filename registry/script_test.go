package registry

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/guest-sdk/js/quickjs"
	"github.com/wasmcp/wasmcp/host"
)

// useRunner makes the committed JavaScript runner (guest-sdk/js/quickjs)
// the registry's, or the module named by $WASMCP_JS_RUNNER, to compare
// another runner side by side.
func useRunner(tb testing.TB) []byte {
	tb.Helper()
	wasm := quickjs.Runner
	if p := os.Getenv("WASMCP_JS_RUNNER"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		wasm = b
	}
	SetScriptTools(ScriptTools{Runner: func() ([]byte, error) { return wasm, nil }, SDK: quickjs.SDKAliases()})
	return wasm
}

const echoScript = `const { McpServer } = require("wasmcp");
const server = new McpServer({ name: "echo", version: "1.0.0" });
server.registerTool("echo", { description: "Returns its text.",
	inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
	({ text }) => text);
`

func TestScriptNames(t *testing.T) {
	for name, want := range map[string]bool{"a.js": true, "a.ts": true, "a.d.ts": false, "a.wasm": true, ".a.js": false, "a.json": false, ".js": false} {
		if got := moduleFile(name); got != want {
			t.Errorf("moduleFile(%q) = %v, want %v", name, got, want)
		}
	}
	if got := ModuleName("/x/hello.ts"); got != "hello" {
		t.Errorf("ModuleName = %q", got)
	}
	if got := PolicyFile("/x/hello.js"); got != "/x/hello.policy.toml" {
		t.Errorf("PolicyFile = %q", got)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.ts"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := fileFor(dir, "s.policy.toml"); got != "s.ts" {
		t.Errorf("fileFor(s.policy.toml) beside s.ts = %q", got)
	}
}

// TestScriptsShareCode: scripts run from snapshots split from the runner's
// code (host.Policy.SharedCode), each call's instance given its own
// script's state: two scripts loaded in one engine each answer with their
// own tool, call after call, interleaved.
func TestScriptsShareCode(t *testing.T) {
	useRunner(t)
	dir := t.TempDir()
	e, err := host.NewEngine(host.Config{CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), InstrumentLoops: true,
		SnapshotTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	var mods []*host.Module
	for _, name := range []string{"one", "two"} {
		src := `const { McpServer } = require("wasmcp");
const server = new McpServer({ name: "` + name + `", version: "1.0.0" });
let calls = 0;
server.registerTool("who", {}, () => "` + name + ` " + (++calls));
`
		script := filepath.Join(dir, name+".js")
		if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadFile(context.Background(), e, script)
		if err != nil {
			t.Fatal(err)
		}
		if used, why := m.Snapshot(); !used {
			t.Fatalf("%s runs without a snapshot: %s", name, why)
		}
		if !m.Policy().SharedCode {
			t.Fatalf("%s: its policy does not share the runner's code", name)
		}
		mods = append(mods, m)
	}
	for i := 0; i < 3; i++ {
		for j, m := range mods {
			r, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(`{"name":"who","arguments":{}}`), nil)
			if err != nil || r.Error != nil {
				t.Fatalf("call: %v %v", err, r)
			}
			// A fresh instance per call: the counter starts from the
			// snapshot's 0 every time.
			want := []string{"one 1", "two 1"}[j]
			if !strings.Contains(string(r.Result), `"text":"`+want+`"`) {
				t.Fatalf("call %d of %s answered %s, want %q", i, []string{"one", "two"}[j], r.Result, want)
			}
		}
	}
	// The code budget counts the shared code once: two scripts hold one
	// copy of the runner's machine code. (A build is counted just after
	// it is handed out: wait for it, bounded.)
	one := mods[0].Footprint().Code
	var used int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if used, _ = e.CodeMemory(); used == one {
			break
		}
	}
	if one == 0 || mods[1].Footprint().Code != one || used != one {
		t.Fatalf("the code budget counts %d bytes for two scripts whose shared code is %d (%d): want it counted once",
			used, one, mods[1].Footprint().Code)
	}
}

// BenchmarkScriptEcho is one tools/call of a JavaScript echo tool in a
// fresh instance from the script's snapshot, as wasmcp serve runs it
// (compare host's BenchmarkWordCount/go-reactor):
//
//	go test -run '^$' -bench ScriptEcho -benchmem ./registry/
func BenchmarkScriptEcho(b *testing.B) {
	runner := useRunner(b)
	dir := b.TempDir()
	script := filepath.Join(dir, "echo.js")
	if err := os.WriteFile(script, []byte(echoScript), 0o644); err != nil {
		b.Fatal(err)
	}
	// The start-up run for the snapshot is given a minute: under the 5s
	// default a busy machine measures the script without its snapshot.
	e, err := host.NewEngine(host.Config{CacheDir: cacheDir, Logger: slog.New(slog.DiscardHandler), InstrumentLoops: true,
		SnapshotTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	m, err := LoadFile(context.Background(), e, script)
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
		if i == 0 {
			var res struct {
				Content []struct{ Text string } `json:"content"`
			}
			if json.Unmarshal(r.Result, &res) != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "hello") {
				b.Fatalf("echo answered %s", r.Result)
			}
		}
	}
	// After the loop: ResetTimer drops the metrics reported before it.
	// cpu-ns/op is the process's CPU time per call (the garbage
	// collector's included): read it rather than ns/op on a busy machine.
	if cpu > 0 {
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
	b.ReportMetric(float64(len(runner)), "runner-bytes")
	b.ReportMetric(float64(m.Footprint().Snapshot), "snapshot-bytes")
}

func hiScript(version string) []byte {
	return []byte(`const { McpServer } = require("wasmcp");
new McpServer({ name: "hi", version: "1.0.0" }).registerTool("js_hi", {}, () => "hi from ` + version + `");
`)
}

// TestScriptHotReload: saving a script reloads it; a policy beside it
// belongs to it; a .d.ts beside it is not a tool.
func TestScriptHotReload(t *testing.T) {
	useRunner(t)
	f := newFixture(t, WatchOptions{Settle: 20 * time.Millisecond})
	if err := os.WriteFile(filepath.Join(f.dir, "wasmcp.d.ts"), []byte("declare module \"wasmcp\" {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A script's first load compiles the runner with its snapshot: slow
	// on a busy machine.
	waitCall := func(want string) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			got := f.call("js_hi")
			if strings.Contains(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("js_hi never answered %q; last: %s", want, got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	f.deploy("hi.js", hiScript("v1"))
	waitCall("hi from v1")
	first := f.reg.Modules()["hi.js"]
	if err := os.WriteFile(filepath.Join(f.dir, "hi.policy.toml"), []byte("timeout = \"5s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the policy's reload", func() bool { m := f.reg.Modules()["hi.js"]; return m != nil && m != first })
	if got := f.reg.Modules()["hi.js"].Policy().Limits.Timeout; got != 5*time.Second {
		t.Errorf("the script's policy timeout is %v, want 5s", got)
	}
	f.deploy("hi.js", hiScript("v2"))
	waitCall("hi from v2")
	for name := range f.reg.Modules() {
		if strings.HasSuffix(name, ".d.ts") {
			t.Errorf("%s was loaded as a tool", name)
		}
	}
}
