package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

var probeWasm []byte

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestMain(m *testing.M) {
	// Start-ups under -race on a loaded machine can pass the 5 s default
	// (TestDamagedSnapshotIsRemoved's probe did): a test that means the
	// deadline sets Config.SnapshotTimeout itself.
	defaultSnapshotTimeout = 2 * time.Minute
	dir, err := os.MkdirTemp("", "host-test")
	if err != nil {
		panic(err)
	}
	out := filepath.Join(dir, "probe.wasm")
	if err := guestbuild.Build(context.Background(), "testdata/guests/probe", out); err != nil {
		fmt.Fprintln(os.Stderr, "building the probe guest:", err)
		os.Exit(1)
	}
	probeWasm, err = os.ReadFile(out)
	if err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testCache is shared by every test (and every test binary of a run), so
// the probe is compiled once: compiling a Go guest is slow under -race.
var testCache = filepath.Join(os.TempDir(), "wasmcp-test-cache")

func newEngine(t testing.TB, l Limits) *Engine {
	t.Helper()
	e, err := NewEngine(Config{CacheDir: testCache, Limits: l, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

func loadProbe(t testing.TB, e *Engine, p Policy) *Module {
	t.Helper()
	m, err := e.Load(context.Background(), "probe", probeWasm, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// callTool calls a probe tool and returns the text of its first content
// block, or the guest error.
func callTool(t testing.TB, m *Module, peer contract.Peer, name string, args string) (string, error) {
	t.Helper()
	params := fmt.Sprintf(`{"name":%q,"arguments":%s,"_meta":{"progressToken":"tok"}}`, name, args)
	return toolText(t, m, context.Background(), params, peer)
}

// toolText makes one tools/call with params and returns the text of the
// result's first content block, or the guest error (a tool error as an
// error too).
func toolText(t testing.TB, m *Module, ctx context.Context, params string, peer contract.Peer) (string, error) {
	t.Helper()
	reply, err := m.Call(ctx, abi.MethodToolsCall, []byte(params), peer)
	if err != nil {
		return "", err
	}
	if reply.Error != nil {
		return "", reply.Error
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(reply.Result, &res); err != nil {
		t.Fatalf("result %s: %v", reply.Result, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("result without content: %s", reply.Result)
	}
	if res.IsError {
		return "", errors.New(res.Content[0].Text)
	}
	return res.Content[0].Text, nil
}

func TestDescribe(t *testing.T) {
	m := loadProbe(t, newEngine(t, Limits{}), Policy{})
	d := m.Description()
	if d.ABIVersion != 1 || d.Name != "probe" || len(d.Tools) == 0 {
		t.Fatalf("description: %+v", d)
	}
	if _, ok := m.Schemas("sleep"); !ok {
		t.Fatal("no schemas for tool sleep")
	}
	if m.Reactor() {
		t.Fatal("a Go guest is a command module")
	}
}

func TestFreshInstanceEveryCall(t *testing.T) {
	requireFreshEveryCall(t, loadProbe(t, newEngine(t, Limits{}), Policy{}), 8)
}

// requireFreshEveryCall calls the probe's count tool three times in a row
// and then concurrent times at once: every call must see the counter at
// its initial value, so no call saw another's state.
func requireFreshEveryCall(t *testing.T, m *Module, concurrent int) {
	t.Helper()
	for i := 0; i < 3; i++ {
		if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
			t.Fatalf("call %d: %q, %v; want 1", i, got, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, concurrent)
	for i := 0; i < concurrent; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
				errs <- fmt.Errorf("concurrent call: %q, %v", got, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestDenyByDefault(t *testing.T) {
	m := loadProbe(t, newEngine(t, Limits{}), Policy{})
	got, err := callTool(t, m, nil, "env", "{}")
	if err != nil {
		t.Fatal(err)
	}
	if got != `args=["probe"] env=0 passwd=true` {
		t.Fatalf("guest sees %s", got)
	}
}

func TestFailuresAreClearAndContained(t *testing.T) {
	// Only the loop case relies on the deadline; the others get a long
	// one so a loaded machine cannot turn them into deadline failures.
	limits := Limits{Timeout: time.Minute, OutputBytes: 1 << 20, MemoryBytes: 64 << 20}
	e := newEngine(t, limits)
	m := loadProbe(t, e, Policy{})
	short := limits
	short.Timeout = 2 * time.Second
	mShort := loadProbe(t, e, Policy{Limits: short})
	cases := []struct {
		tool, args string
		kind       Kind
		want       string
	}{
		{"loop", "{}", KindLimit, "deadline of 2s exceeded"},
		{"exit3", "{}", KindExit, "exited with code 3 before answering (stderr: about to exit 3)"},
		{"garbage", "{}", KindProtocol, "not a JSON-RPC message"},
		{"wrong_id", "{}", KindProtocol, "answered with id 987654321"},
		{"flood", `{"n":4}`, KindLimit, "wrote more than 1MiB to stdout and stderr (limit output)"},
		{"alloc", `{"n":200}`, KindLimit, "memory reached the limit of 64MiB"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			mod := m
			if c.tool == "loop" {
				mod = mShort
			}
			_, err := callTool(t, mod, nil, c.tool, c.args)
			if !IsKind(err, c.kind) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want a %s error containing %q", err, c.kind, c.want)
			}
			if !strings.HasPrefix(err.Error(), "module probe: ") {
				t.Fatalf("error does not name the module: %v", err)
			}
			// The module keeps serving.
			if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
				t.Fatalf("after %s: %q, %v", c.tool, got, err)
			}
		})
	}
}

func TestCallerCancel(t *testing.T) {
	m := loadProbe(t, newEngine(t, Limits{}), Policy{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := m.Call(ctx, abi.MethodToolsCall, []byte(`{"name":"loop","arguments":{}}`), nil)
	if !IsKind(err, KindCanceled) {
		t.Fatalf("got %v, want canceled", err)
	}
}

// recordingPeer answers elicitations and records notifications.
type recordingPeer struct {
	mu    sync.Mutex
	notes []string
}

func (p *recordingPeer) Notify(_ context.Context, method string, params []byte) {
	p.mu.Lock()
	p.notes = append(p.notes, method+" "+string(params))
	p.mu.Unlock()
}

func (p *recordingPeer) Request(_ context.Context, method string, params []byte) ([]byte, error) {
	if method != abi.MethodElicit {
		return nil, &abi.Error{Code: -32601, Message: "no " + method}
	}
	if !strings.Contains(string(params), "Your name?") {
		return nil, fmt.Errorf("unexpected params %s", params)
	}
	return []byte(`{"action":"accept","content":{"name":"Ada"}}`), nil
}

func TestGuestRequestsAndNotifications(t *testing.T) {
	m := loadProbe(t, newEngine(t, Limits{}), Policy{})
	p := &recordingPeer{}
	got, err := callTool(t, m, p, "ask", "{}")
	if err != nil || got != "accept: hello Ada" {
		t.Fatalf("got %q, %v", got, err)
	}
	all := strings.Join(p.notes, "\n")
	for _, want := range []string{`notifications/progress {"progressToken":"tok","progress":1,"total":2,"message":"asking"}`, "notifications/message", `notifications/progress {"progressToken":"tok","progress":2`} {
		if !strings.Contains(all, want) {
			t.Errorf("notifications lack %q:\n%s", want, all)
		}
	}
	// Without a peer the guest's request fails cleanly: the tool reports it.
	if _, err := callTool(t, m, nil, "ask", "{}"); err == nil || !strings.Contains(err.Error(), "no client") {
		t.Fatalf("without a client: %v", err)
	}
}

func TestGateQueuesThenRefuses(t *testing.T) {
	m := loadProbe(t, newEngine(t, Limits{}), Policy{MaxInstances: 1, MaxQueue: 1})
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	results := make(chan error, 2)
	go func() { _, err := callTool(t, m, nil, "sleep", `{"n":1500}`); results <- err }()
	waitFor("one instance runs", func() bool { return len(m.gate.slots) == 1 })
	go func() { _, err := callTool(t, m, nil, "sleep", `{"n":10}`); results <- err }()
	waitFor("one call queues", func() bool { return m.gate.waiting.Load() == 1 })
	_, err := callTool(t, m, nil, "sleep", `{"n":10}`)
	if !IsKind(err, KindLimit) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("third call: %v; want busy", err)
	}
	for i := 0; i < 2; i++ {
		if err := <-results; err != nil {
			t.Fatalf("running or queued call failed: %v", err)
		}
	}
}

// appendCustomSection returns wasm with a custom section appended.
func appendCustomSection(wasm []byte, name string, data []byte) []byte {
	payload := append(uleb(uint64(len(name))), name...)
	payload = append(payload, data...)
	out := append([]byte(nil), wasm...)
	out = append(out, 0)
	out = append(out, uleb(uint64(len(payload)))...)
	return append(out, payload...)
}

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}

func TestCustomSectionDescription(t *testing.T) {
	e := newEngine(t, Limits{})
	desc := `{"abiVersion":1,"name":"from-section","tools":[{"name":"count","description":"c","inputSchema":{"type":"object"}}]}`
	// A C string array ends with a NUL (and a file may end with a newline).
	m, err := e.Load(context.Background(), "sectioned", appendCustomSection(probeWasm, abi.CustomSection, []byte(desc+"\n\x00")), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Description().Name != "from-section" || len(m.Description().Tools) != 1 {
		t.Fatalf("description %+v", m.Description())
	}
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
		t.Fatalf("call: %q %v", got, err)
	}
}

func TestLoadRefusals(t *testing.T) {
	e := newEngine(t, Limits{})
	foreignImport := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 4, 1, 0x60, 0, 0, // type section: () -> ()
		2, 11, 1, 3, 'e', 'n', 'v', 3, 'f', 'o', 'o', 0, 0, // import env.foo
	}
	noEntry := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	cases := []struct {
		name string
		wasm []byte
		want string
	}{
		{"garbage", []byte("not wasm"), "does not compile"},
		{"foreign-import", foreignImport, "imports env.foo"},
		{"no-entry", noEntry, "exports neither _start"},
		{"abi-v2", appendCustomSection(probeWasm, abi.CustomSection, []byte(`{"abiVersion":2}`)), "speaks wasmcp ABI v2; this host speaks v1"},
		{"bad-tool-name", appendCustomSection(probeWasm, abi.CustomSection, []byte(`{"abiVersion":1,"tools":[{"name":"no spaces","inputSchema":{"type":"object"}}]}`)), "tool name"},
		{"bad-schema", appendCustomSection(probeWasm, abi.CustomSection, []byte(`{"abiVersion":1,"tools":[{"name":"t","inputSchema":{"type":"string"}}]}`)), `"type": "object"`},
		{"output-array", appendCustomSection(probeWasm, abi.CustomSection, []byte(`{"abiVersion":1,"tools":[{"name":"t","outputSchema":{"type":"array"}}]}`)), `tool "t" outputSchema: output schema must have "type": "object" at its root (MCP requires it), not array`},
		{"output-untyped", appendCustomSection(probeWasm, abi.CustomSection, []byte(`{"abiVersion":1,"tools":[{"name":"t","outputSchema":{"properties":{}}}]}`)), `it has no "type"`},
		{"output-bool", appendCustomSection(probeWasm, abi.CustomSection, []byte(`{"abiVersion":1,"tools":[{"name":"t","outputSchema":true}]}`)), `outputSchema: output schema must`},
		{"two-descriptions", appendCustomSection(appendCustomSection(probeWasm, abi.CustomSection, []byte(`{"abiVersion":1}`)), abi.CustomSection, []byte(`{"abiVersion":1}`)), "has 2 custom sections named " + abi.CustomSection},
		{"dup-tool", appendCustomSection(probeWasm, abi.CustomSection, []byte(`{"abiVersion":1,"tools":[{"name":"t"},{"name":"t"}]}`)), "declared twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Load(context.Background(), c.name, c.wasm, Policy{})
			if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want a load error containing %q", err, c.want)
			}
		})
	}
}

func TestDescriptionCacheSurvivesRestart(t *testing.T) {
	var hash string
	for i := 0; i < 2; i++ {
		e, err := NewEngine(Config{CacheDir: testCache, Logger: quietLogger})
		if err != nil {
			t.Fatal(err)
		}
		m := loadProbe(t, e, Policy{})
		if m.Description().Name != "probe" {
			t.Fatal("bad description")
		}
		hash = m.Hash()
		e.Close(context.Background())
	}
	if _, err := os.Stat(filepath.Join(testCache, "describe", hash+".json")); err != nil {
		t.Fatalf("description not cached: %v", err)
	}
}

func BenchmarkCallFreshInstance(b *testing.B) {
	e := newEngine(b, Limits{})
	m := loadProbe(b, e, Policy{})
	params := []byte(`{"name":"count","arguments":{}}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Call(context.Background(), abi.MethodToolsCall, params, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// skipLongInShort skips a test that takes ten seconds or more (long
// sleeps, many compilations) under -short: `.ci/test quick` stays within a
// few minutes, and the full run (.ci/test) runs it.
func skipLongInShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("over 10 s; the full run (.ci/test) runs it")
	}
}
