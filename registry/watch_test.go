package registry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// smallV1 is the hand-written guest of tests/testdata/small; smallV2 the
// same module answering "small v2" (its description changes too).
var smallV1, smallV2 = func() ([]byte, []byte) {
	b, err := os.ReadFile("../tests/testdata/small/small.wasm")
	if err != nil {
		panic(err)
	}
	return b, bytes.ReplaceAll(b, []byte("small v1"), []byte("small v2"))
}()

// syncBuffer is a log destination tests read while the watcher writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixture is a registry over a temporary directory, serving into a
// protocol.Server whose list_changed notifications land on changes.
type fixture struct {
	t       *testing.T
	dir     string
	engine  *host.Engine
	srv     *protocol.Server
	reg     *Registry
	logs    *syncBuffer
	changes chan string
	stop    func() // ends the watcher and waits for it
}

// newFixture loads dir and watches it with opts; a shared cache directory
// keeps compilations warm across tests.
func newFixture(t *testing.T, opts WatchOptions) *fixture {
	t.Helper()
	return newFixtureWith(t, opts, host.Config{})
}

// newFixtureWith is newFixture with the engine's configuration (its cache
// and logger are the fixture's).
func newFixtureWith(t *testing.T, opts WatchOptions, cfg host.Config) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), logs: &syncBuffer{}, changes: make(chan string, 1024)}
	log := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var err error
	cfg.CacheDir, cfg.Logger = cacheDir, log
	f.engine, err = host.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = protocol.NewServer(protocol.Options{Logger: log})
	f.srv.AddListener(&protocol.Listener{Tools: true, Prompts: true, Resources: true, Send: func(msg []byte) {
		f.changes <- string(msg)
	}})
	f.reg = New(f.dir, f.engine, f.srv, log)
	if err := f.reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.reg.WatchWith(ctx, opts) }()
	f.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchWith: %v", err)
		}
		f.stop = func() {}
	}
	t.Cleanup(func() {
		f.stop()
		f.reg.Close()
		_ = f.engine.Close(context.Background())
		if t.Failed() {
			t.Logf("logs:\n%s", f.logs)
		}
	})
	return f
}

var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmcp-registry-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// deploy writes b to name the safe way: a hidden temporary file renamed
// into place.
func (f *fixture) deploy(name string, b []byte) {
	f.t.Helper()
	tmp := filepath.Join(f.dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.dir, name)); err != nil {
		f.t.Fatal(err)
	}
}

// waitChange waits for a list_changed notification of kind ("tools" …).
func (f *fixture) waitChange(kind string) {
	f.t.Helper()
	want := "notifications/" + kind + "/list_changed"
	deadline := time.After(20 * time.Second)
	for {
		select {
		case msg := <-f.changes:
			if strings.Contains(msg, want) {
				return
			}
		case <-deadline:
			f.t.Fatalf("no %s", want)
		}
	}
}

// waitFor polls cond until it holds.
func (f *fixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// call calls a tool through the server and returns the response body.
func (f *fixture) call(tool string) string {
	f.t.Helper()
	return handle(f.t, f.srv, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`)
}

func handle(t testing.TB, srv *protocol.Server, line string) string {
	t.Helper()
	msg, _, perr := protocol.Decode([]byte(line))
	if perr != nil {
		t.Fatalf("decode: %v", perr)
	}
	return string(srv.Handle(context.Background(), nil, msg, nil, protocol.Hint{}).Body)
}

func TestWatchAddReplaceRefuseRemove(t *testing.T) {
	f := newFixture(t, WatchOptions{Settle: 20 * time.Millisecond})
	if got := f.call("small_hello"); !strings.Contains(got, "-32602") {
		t.Fatalf("before add: %s", got)
	}

	f.deploy("small.wasm", smallV1)
	f.waitChange("tools")
	if got := f.call("small_hello"); !strings.Contains(got, "hello from small v1") {
		t.Fatalf("after add: %s", got)
	}

	f.deploy("small.wasm", smallV2)
	f.waitChange("tools")
	if got := f.call("small_hello"); !strings.Contains(got, "hello from small v2") {
		t.Fatalf("after replace: %s", got)
	}

	// A broken module over the good one is refused; v2 keeps serving.
	f.deploy("small.wasm", []byte("\x00asm\x01\x00\x00\x00garbage"))
	f.waitFor("the refusal", func() bool { return strings.Contains(f.logs.String(), "module refused") })
	logs := f.logs.String()
	if !strings.Contains(logs, filepath.Join(f.dir, "small.wasm")) || !strings.Contains(logs, "does not compile") ||
		!strings.Contains(logs, "previous version keeps serving") {
		t.Fatalf("refusal log lacks the file, the reason or the outcome:\n%s", logs)
	}
	if got := f.call("small_hello"); !strings.Contains(got, "hello from small v2") {
		t.Fatalf("after a broken replacement: %s", got)
	}

	// A module whose description is invalid is refused the same way.
	bad := bytes.ReplaceAll(smallV1, []byte(`"abiVersion":1`), []byte(`"abiVersion":9`))
	f.deploy("other.wasm", bad)
	f.waitFor("the ABI refusal", func() bool { return strings.Contains(f.logs.String(), "speaks wasmcp ABI v9") })

	if err := os.Remove(filepath.Join(f.dir, "small.wasm")); err != nil {
		t.Fatal(err)
	}
	f.waitChange("tools")
	if got := f.call("small_hello"); !strings.Contains(got, "-32602") || !strings.Contains(got, "Unknown tool") {
		t.Fatalf("after delete: %s", got)
	}
	f.waitFor("the removed module to close", func() bool { return f.reg.open.Load() == 0 })
}

func TestHiddenFilesAndSubdirectoriesIgnored(t *testing.T) {
	f := newFixture(t, WatchOptions{Settle: 10 * time.Millisecond})
	if err := os.WriteFile(filepath.Join(f.dir, ".hidden.wasm"), smallV1, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "sub", "nested.wasm"), smallV1, 0o644); err != nil {
		t.Fatal(err)
	}
	// A visible module afterwards: once it is in, the others had their
	// chance (events are handled in order).
	f.deploy("small.wasm", smallV1)
	f.waitChange("tools")
	if mods := f.reg.Modules(); len(mods) != 1 || mods["small.wasm"] == nil {
		t.Fatalf("modules = %v, want only small.wasm", mods)
	}
}

func TestDuplicateToolNameKeptByIncumbent(t *testing.T) {
	f := newFixture(t, WatchOptions{Settle: 10 * time.Millisecond})
	owner := func() string {
		m, ok := f.srv.Catalog().Tool("small_hello")
		if !ok {
			return ""
		}
		return m.Name()
	}
	warned := logClient(t, f.srv)
	refused := &refusalRecorder{now: map[string]string{}}
	f.reg.SetObserver(refused)
	// b arrives first and serves the tool; a arrives declaring it (its
	// name sorts first) and is refused; b keeps it.
	f.deploy("b.wasm", smallV2)
	f.waitFor("b", func() bool { return owner() == "b" })
	f.deploy("a.wasm", smallV1)
	f.waitFor("a refused", func() bool { return strings.Contains(f.logs.String(), "module refused") })
	if got := owner(); got != "b" {
		t.Fatalf("small_hello served by %q, want the incumbent b", got)
	}
	if got := f.call("small_hello"); strings.Contains(got, "small v1") {
		t.Fatalf("call = %s, want b's answer", got)
	}
	// The client that asked for logs is told, naming both files, once.
	f.waitFor("the warning", func() bool { return len(warned()) > 0 })
	if w := warned(); len(w) != 1 || !strings.Contains(w[0], `"file":"a.wasm"`) || !strings.Contains(w[0], `"served_by":"b.wasm"`) ||
		!strings.Contains(w[0], `small_hello`) || !strings.Contains(w[0], `"level":"warning"`) {
		t.Fatalf("warnings = %q", w)
	}
	if why := refused.get("a.wasm"); !strings.Contains(why, `"small_hello", which b.wasm serves`) {
		t.Fatalf("a.wasm refused for %q", why)
	}
	// A module refused at load is told too.
	f.deploy("junk.wasm", []byte("not a module"))
	f.waitFor("the junk warning", func() bool { w := warned(); return len(w) == 2 && strings.Contains(w[1], `"file":"junk.wasm"`) })
	if refused.get("junk.wasm") == "" {
		t.Fatal("junk.wasm not listed as refused")
	}
	// b leaves: a is taken at the next publish.
	if err := os.Remove(filepath.Join(f.dir, "b.wasm")); err != nil {
		t.Fatal(err)
	}
	f.waitFor("a", func() bool { return owner() == "a" })
	f.waitFor("a.wasm no longer refused", func() bool { return refused.get("a.wasm") == "" })
}

// refusalRecorder is a RefusalObserver: the files refused now, and why.
type refusalRecorder struct {
	mu  sync.Mutex
	now map[string]string
}

func (*refusalRecorder) ModuleLoaded(string, time.Duration, int) {}
func (*refusalRecorder) ModuleRefused()                          {}
func (*refusalRecorder) CatalogPublished()                       {}
func (o *refusalRecorder) ModuleRefusedNow(module, reason string, refused bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if refused {
		o.now[module] = reason
	} else {
		delete(o.now, module)
	}
}
func (o *refusalRecorder) get(module string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.now[module]
}

// logClient is a legacy session that asked for logs at warning; it
// returns the notifications/message it has received.
func logClient(t *testing.T, srv *protocol.Server) func() []string {
	t.Helper()
	sess := protocol.NewSession()
	var mu sync.Mutex
	var got []string
	t.Cleanup(srv.AddListener(&protocol.Listener{Session: sess, Send: func(m []byte) {
		if strings.Contains(string(m), `"notifications/message"`) {
			mu.Lock()
			got = append(got, string(m))
			mu.Unlock()
		}
	}}))
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`,
	} {
		msg, _, err := protocol.Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		srv.Handle(context.Background(), sess, msg, nil, protocol.Hint{})
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// At the first load a hand-placed module keeps a name over a pulled one
// (a pull marker is beside it) whatever their file names.
func TestDuplicateToolNameHandPlacedBeatsPulled(t *testing.T) {
	reg, srv := pulledBesideHandPlaced(t, smallV2)
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, ok := srv.Catalog().Tool("small_hello")
	if !ok || m.Name() != "z" {
		t.Fatalf("small_hello served by %v, want the hand-placed z", m)
	}
}

func TestPolicyChangeReloadsModule(t *testing.T) {
	f := newFixture(t, WatchOptions{Settle: 10 * time.Millisecond})
	f.deploy("small.wasm", smallV1)
	f.waitChange("tools")
	first := f.reg.Modules()["small.wasm"]
	if err := os.WriteFile(filepath.Join(f.dir, "small.policy.toml"), []byte("# policy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the reload", func() bool { m := f.reg.Modules()["small.wasm"]; return m != nil && m != first })
	// Touching the module without changing it keeps the loaded version.
	second := f.reg.Modules()["small.wasm"]
	now := time.Now().Add(time.Second)
	if err := os.Chtimes(filepath.Join(f.dir, "small.wasm"), now, now); err != nil {
		t.Fatal(err)
	}
	f.deploy("marker.wasm", smallV2) // handled after the touch
	f.waitFor("the marker", func() bool { return f.reg.Modules()["marker.wasm"] != nil })
	if f.reg.Modules()["small.wasm"] != second {
		t.Fatal("touching an unchanged module reloaded it")
	}
}

func TestSlowWriteNotLoadedHalfWay(t *testing.T) {
	// The writer pauses well inside the settle window between chunks; the
	// module must load once, complete, and never be refused.
	f := newFixture(t, WatchOptions{Settle: 400 * time.Millisecond})
	w, err := os.Create(filepath.Join(f.dir, "small.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(smallV1); i += 100 {
		if _, err := w.Write(smallV1[i:min(i+100, len(smallV1))]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.Close()
	f.waitChange("tools")
	if strings.Contains(f.logs.String(), "module refused") {
		t.Fatalf("a file being written was loaded half-way:\n%s", f.logs)
	}
	if got := f.call("small_hello"); !strings.Contains(got, "small v1") {
		t.Fatalf("call = %s", got)
	}
}

func TestPollingFallback(t *testing.T) {
	f := newFixture(t, WatchOptions{Polling: true, Poll: 10 * time.Millisecond})
	f.deploy("small.wasm", smallV1)
	f.waitChange("tools")
	f.deploy("small.wasm", smallV2)
	f.waitChange("tools")
	if got := f.call("small_hello"); !strings.Contains(got, "small v2") {
		t.Fatalf("call = %s", got)
	}
	if err := os.Remove(filepath.Join(f.dir, "small.wasm")); err != nil {
		t.Fatal(err)
	}
	f.waitChange("tools")
	if _, ok := f.srv.Catalog().Tool("small_hello"); ok {
		t.Fatal("tool still listed after delete")
	}
	// A broken file is refused once, not at every poll.
	f.deploy("broken.wasm", []byte("not wasm"))
	f.waitFor("the refusal", func() bool { return strings.Contains(f.logs.String(), "module refused") })
	for range 3 { // each load takes at least two more polls
		f.deploy("small.wasm", smallV1)
		f.waitChange("tools")
		if err := os.Remove(filepath.Join(f.dir, "small.wasm")); err != nil {
			t.Fatal(err)
		}
		f.waitChange("tools")
	}
	if n := strings.Count(f.logs.String(), "module refused"); n != 1 {
		t.Fatalf("the broken file was refused %d times, want 1", n)
	}
}

func TestRetiredModuleClosesAfterLastCall(t *testing.T) {
	f := newFixture(t, WatchOptions{Settle: 10 * time.Millisecond})
	f.deploy("small.wasm", smallV1)
	f.waitChange("tools")
	old := f.reg.current("small.wasm")
	if !old.acquire() { // a call in flight on v1
		t.Fatal("acquire failed on a live module")
	}
	f.deploy("small.wasm", smallV2)
	f.waitChange("tools")
	// The notification goes out with the swap; v1 is retired right after.
	f.waitFor("v1 to retire", func() bool { old.mu.Lock(); defer old.mu.Unlock(); return old.retired })
	if f.reg.open.Load() != 2 {
		t.Fatalf("open modules = %d, want 2 (v1 has a call running)", f.reg.open.Load())
	}
	// A call that found v1 in an old catalog still runs on v1 while v1 is
	// open.
	if r, err := old.Call(context.Background(), "tools/call", []byte(`{"name":"small_hello","arguments":{}}`), nil); err != nil ||
		!strings.Contains(string(r.Result), "small v1") {
		t.Fatalf("call on the retiring module: %v %s", err, r.Result)
	}
	old.release() // the last call on v1 ends
	if f.reg.open.Load() != 1 {
		t.Fatalf("open modules = %d after the last call, want 1", f.reg.open.Load())
	}
	// Once v1 is closed, a late caller holding it is served by v2.
	r, err := old.Call(context.Background(), "tools/call", []byte(`{"name":"small_hello","arguments":{}}`), nil)
	if err != nil || !strings.Contains(string(r.Result), "small v2") {
		t.Fatalf("late call: %v %v", err, r)
	}
	// And after a removal, it fails cleanly.
	if err := os.Remove(filepath.Join(f.dir, "small.wasm")); err != nil {
		t.Fatal(err)
	}
	f.waitChange("tools")
	if _, err := old.Call(context.Background(), "tools/call", nil, nil); !host.IsKind(err, host.KindLoad) {
		t.Fatalf("call on a removed module: %v", err)
	}
}

func TestNoLeakAfter200Swaps(t *testing.T) {
	f := newFixture(t, WatchOptions{Settle: 2 * time.Millisecond})
	f.deploy("small.wasm", smallV1)
	f.waitChange("tools")
	f.call("small_hello")
	runtime.GC()
	base := runtime.NumGoroutine()
	for i := range 200 {
		v, want := smallV2, "small v2"
		if i%2 == 1 {
			v, want = smallV1, "small v1"
		}
		f.deploy("small.wasm", v)
		f.waitChange("tools")
		if got := f.call("small_hello"); !strings.Contains(got, want) {
			t.Fatalf("swap %d: call = %s, want %s", i, got, want)
		}
	}
	// The last replaced version is retired just after the notification.
	f.waitFor("one open module", func() bool { return f.reg.open.Load() == 1 })
	var n int
	f.waitFor("goroutines to settle", func() bool {
		n = runtime.NumGoroutine()
		return n <= base
	})
	f.stop()
	f.reg.Close()
	if n := f.reg.open.Load(); n != 0 {
		t.Fatalf("open modules after Close = %d, want 0", n)
	}
	t.Logf("goroutines: %d before the swaps, %d after", base, n)
}

func TestReloadOnce(t *testing.T) {
	// Reload (SIGHUP) without a watcher.
	dir := t.TempDir()
	engine, err := host.NewEngine(host.Config{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close(context.Background())
	srv := protocol.NewServer(protocol.Options{})
	reg := New(dir, engine, srv, slog.New(slog.DiscardHandler))
	defer reg.Close()
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.wasm"), smallV1, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.Catalog().Tool("small_hello"); ok {
		t.Fatal("loaded without a reload")
	}
	if err := reg.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.Catalog().Tool("small_hello"); !ok {
		t.Fatal("not loaded by Reload")
	}
	if err := os.Remove(filepath.Join(dir, "small.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := reg.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.Catalog().Tool("small_hello"); ok {
		t.Fatal("still served after delete and Reload")
	}
	if err := reg.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := reg.Reload(context.Background()); err == nil {
		t.Fatal("Reload of a missing directory succeeded")
	}
}

// TestPulledCheckRefusesOnlyPulled: the check SetPulledCheck sets judges
// the modules with a pull marker beside them, with their description,
// and refuses those it fails; a hand-placed module is not asked.
func TestPulledCheckRefusesOnlyPulled(t *testing.T) {
	reg, _ := pulledBesideHandPlaced(t, smallV1)
	var asked []string
	reg.SetPulledCheck(func(module string, d *abi.Description) error {
		asked = append(asked, module)
		if d == nil || len(d.Tools) == 0 {
			t.Errorf("the check of %s got no description", module)
		}
		return errors.New("declares names no one approved")
	})
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "a" {
		t.Fatalf("the check was asked about %v, want only the pulled a", asked)
	}
	mods := reg.Modules()
	if mods["a.wasm"] != nil || mods["z.wasm"] == nil {
		t.Fatalf("served %v: want the hand-placed z and not the refused pulled a", mods)
	}
}

// pulledBesideHandPlaced is a registry, not loaded yet, of a directory
// holding a pulled a.wasm (smallV1, a pull marker beside it) and a
// hand-placed z.wasm (the module z), and its protocol server.
func pulledBesideHandPlaced(t *testing.T, z []byte) (*Registry, *protocol.Server) {
	t.Helper()
	dir := t.TempDir()
	for name, b := range map[string][]byte{"a.wasm": smallV1, ".a.wasmcp-pulled": nil, "z.wasm": z} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine, err := host.NewEngine(host.Config{CacheDir: cacheDir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.NewServer(protocol.Options{Logger: log})
	reg := New(dir, engine, srv, log)
	t.Cleanup(func() {
		reg.Close()
		engine.Close(context.Background())
	})
	return reg, srv
}
