package host

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// reactorProbe is the probe guest built as a reactor that asks for a
// snapshot (testdata/guests/probe/reactor.go), built once per test binary.
var reactorProbe = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "host-test-reactor")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "probe.wasm")
	if err := guestbuild.BuildReactor(context.Background(), "testdata/guests/probe", out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
})

// loadSnapshotProbe loads the reactor probe on e and checks that it runs
// from a snapshot.
func loadSnapshotProbe(t testing.TB, e *Engine, p Policy) *Module {
	t.Helper()
	wasm, err := reactorProbe()
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Load(context.Background(), "probe", wasm, p)
	if err != nil {
		t.Fatal(err)
	}
	if used, reason := m.Snapshot(); !used {
		t.Fatalf("the reactor probe runs without a snapshot: %s", reason)
	}
	if !m.Reactor() {
		t.Fatal("the reactor probe is not a reactor")
	}
	return m
}

func TestSnapshotFreshStateEveryCall(t *testing.T) {
	requireFreshEveryCall(t, loadSnapshotProbe(t, newEngine(t, Limits{}), Policy{}), 16)
}

// randomFields splits the random tool's answer into its fields.
func randomFields(t *testing.T, m *Module) map[string]string {
	t.Helper()
	got, err := callTool(t, m, nil, "random", "{}")
	if err != nil {
		t.Fatal(err)
	}
	f := map[string]string{}
	for _, kv := range strings.Fields(got) {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	return f
}

// TestSnapshotRandomness pins what a snapshot freezes (documented in the
// SDK's package reactor and docs/writing-tools.md): crypto/rand differs on every
// call; math/rand's and math/rand/v2's top-level generators and map
// iteration order repeat in every call; the environment is the one at
// start-up, and time.Local is UTC.
func TestSnapshotRandomness(t *testing.T) {
	m := loadSnapshotProbe(t, newEngine(t, Limits{}), Policy{Env: []EnvVar{{Name: "PROBE_ENV", Value: "at-init"}}})
	a, b := randomFields(t, m), randomFields(t, m)
	if a["crypto"] == b["crypto"] || len(a["crypto"]) != 32 {
		t.Errorf("crypto/rand gave %s and %s: want different bytes on every call", a["crypto"], b["crypto"])
	}
	for _, k := range []string{"math", "v2", "initmap", "map"} {
		if a[k] != b[k] || a[k] == "" {
			t.Errorf("%s: %q then %q; the snapshot's documented behaviour is the same value in every call", k, a[k], b[k])
		}
	}
	if a["env"] != "at-init" || a["zone"] != "UTC" {
		t.Errorf("env=%q zone=%q; want at-init and UTC", a["env"], a["zone"])
	}
	// Without a snapshot the runtime seeds itself in every instance.
	plain := loadPlainReactor(t, newEngine(t, Limits{}))
	p, q := randomFields(t, plain), randomFields(t, plain)
	if p["math"] == q["math"] && p["v2"] == q["v2"] {
		t.Errorf("without a snapshot math/rand repeated (%s): the test no longer tells the two apart", p["math"])
	}
}

// loadPlainReactor loads the reactor probe with snapshots turned off.
func loadPlainReactor(t *testing.T, e *Engine) *Module {
	t.Helper()
	wasm, err := reactorProbe()
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Load(context.Background(), "probe", wasm, Policy{NoSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	if used, reason := m.Snapshot(); used || !strings.Contains(reason, "snapshot = false") {
		t.Fatalf("snapshot = false: used %v, reason %q", used, reason)
	}
	return m
}

func TestSnapshotPolicyOff(t *testing.T) {
	m := loadPlainReactor(t, newEngine(t, Limits{}))
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
		t.Fatalf("count: %q, %v", got, err)
	}
}

func TestSnapshotLimitsAndRequests(t *testing.T) {
	limits := Limits{Timeout: time.Minute, OutputBytes: 1 << 20, MemoryBytes: 64 << 20}
	e := newEngine(t, limits)
	m := loadSnapshotProbe(t, e, Policy{})
	short := limits
	short.Timeout = 2 * time.Second
	mShort := loadSnapshotProbe(t, e, Policy{Limits: short})
	cases := []struct {
		mod        *Module
		tool, args string
		kind       Kind
		want       string
	}{
		{mShort, "loop", "{}", KindLimit, "deadline of 2s exceeded"},
		{mShort, "sleep", `{"n":60000}`, KindLimit, "deadline of 2s exceeded"},
		{m, "exit3", "{}", KindExit, "exited with code 3 before answering (stderr: about to exit 3)"},
		{m, "flood", `{"n":4}`, KindLimit, "(limit output)"},
		// A Go reactor's runtime traps where a command exits: the error
		// names the limit either way.
		{m, "alloc", `{"n":200}`, "", "its memory reached the limit of 64MiB (limit memory)"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			_, err := callTool(t, c.mod, nil, c.tool, c.args)
			if err == nil || (c.kind != "" && !IsKind(err, c.kind)) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want a %s error containing %q", err, c.kind, c.want)
			}
			if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
				t.Fatalf("after %s: %q, %v", c.tool, got, err)
			}
		})
	}
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := m.Call(ctx, abi.MethodToolsCall, []byte(`{"name":"loop","arguments":{}}`), nil)
		if !IsKind(err, KindCanceled) {
			t.Fatalf("got %v, want canceled", err)
		}
	})
	t.Run("elicit", func(t *testing.T) {
		peer := &recordingPeer{}
		got, err := callTool(t, m, peer, "ask", "{}")
		if err != nil || got != "accept: hello Ada" {
			t.Fatalf("ask: %q, %v", got, err)
		}
	})
}

// TestSnapshotCachedAcrossEngines checks that a second engine on the same
// cache directory reads the snapshot instead of making it again, and that
// a damaged cache file is ignored.
func TestSnapshotCachedAcrossEngines(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	open := func() *Module {
		e, err := NewEngine(Config{CacheDir: dir, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		return loadSnapshotProbe(t, e, Policy{})
	}
	open()
	open()
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if strings.Count(out, "module runs from a snapshot") != 2 || strings.Count(out, "cached=true") != 1 {
		t.Fatalf("want one snapshot made and one read from the cache; log:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "snapshot", "*.wasm"))
	if len(files) != 1 {
		t.Fatalf("snapshot files: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	b[len(b)-1] ^= 0xFF
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	m := open()
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
		t.Fatalf("after a damaged cache file: %q, %v", got, err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// tinyReactor is a reactor that asks for a snapshot, described by its
// custom section, whose wasmcp_snapshot export runs body (a function body
// without locals, ending in 0x0B).
func tinyReactor(body ...byte) []byte {
	w := []byte(wasmrewrite.Header)
	w = append(w, wasmSection(1, 1, 0x60, 0, 0)...)
	w = append(w, wasmSection(3, 2, 0, 0)...)
	w = append(w, wasmSection(5, 1, 0, 1)...)
	w = append(w, wasmSection(6, 1, 0x7F, 1, 0x41, 7, 0x0B)...)
	exp := []byte{3}
	exp = append(appendName(exp, "memory"), 0x02, 0)
	exp = append(appendName(exp, abi.ReactorEntry), 0x00, 0)
	exp = append(appendName(exp, abi.SnapshotEntry), 0x00, 1)
	w = append(w, wasmSection(7, exp...)...)
	main := []byte{0, 0x0B}
	snap := append([]byte{0}, body...)
	code := append([]byte{2, byte(len(main))}, main...)
	code = append(append(code, byte(len(snap))), snap...)
	w = append(w, wasmSection(10, code...)...)
	return appendCustomSection(w, abi.CustomSection, []byte(`{"abiVersion":1,"name":"tiny"}`))
}

// TestSnapshotFallsBack: a module that asks for a snapshot but cannot have
// one runs without it, and says why.
func TestSnapshotFallsBack(t *testing.T) {
	e := newEngine(t, Limits{Timeout: 10 * time.Second})
	cases := []struct {
		name string
		wasm []byte
		want string
	}{
		{"trap", tinyReactor(0x00, 0x0B), "wasmcp_snapshot failed: wasm error: unreachable"},
		{"table", tinyReactor(0x41, 0, 0xD0, 0x70, 0x26, 0, 0x0B), "changes a table at run time"},
		{"command", probeWasm, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "table" {
				// table.set needs a table: add one (funcref, min 1).
				c.wasm = insertSection(c.wasm, 4, []byte{1, 0x70, 0, 1})
			}
			m, err := e.Load(context.Background(), c.name, c.wasm, Policy{})
			if err != nil {
				t.Fatal(err)
			}
			used, reason := m.Snapshot()
			if used || !strings.Contains(reason, c.want) || (c.want == "") != (reason == "") {
				t.Fatalf("used %v, reason %q; want a fall back saying %q", used, reason, c.want)
			}
		})
	}
	// A module whose start-up works runs from its snapshot.
	m, err := e.Load(context.Background(), "ok", tinyReactor(0x41, 42, 0x24, 0, 0x0B), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if used, reason := m.Snapshot(); !used {
		t.Fatalf("not snapshotted: %s", reason)
	}
}

// insertSection puts a section (id, body) before the first section of a
// higher id in w.
func insertSection(w []byte, id byte, body []byte) []byte {
	secs, err := wasmrewrite.Sections(w)
	if err != nil {
		panic(err)
	}
	enc := wasmrewrite.NewEncoder(len(w) + len(body))
	done := false
	for _, s := range secs {
		if !done && s.ID != 0 && s.ID > id {
			enc.Section(id, body)
			done = true
		}
		enc.Section(s.ID, s.Body)
	}
	return enc.Bytes()
}

// sleepyReactor is a reactor that asks for a snapshot and whose
// wasmcp_snapshot sleeps ns (poll_oneoff on a relative clock
// subscription) and returns.
func sleepyReactor(ns int64) []byte {
	w := []byte(wasmrewrite.Header)
	// Types: 0 (i32 i32 i32 i32) -> i32 (poll_oneoff), 1 () -> ().
	w = append(w, wasmSection(1, 2, 0x60, 4, 0x7F, 0x7F, 0x7F, 0x7F, 1, 0x7F, 0x60, 0, 0)...)
	imp := appendName([]byte{1}, "wasi_snapshot_preview1")
	imp = append(appendName(imp, "poll_oneoff"), 0x00, 0)
	w = append(w, wasmSection(2, imp...)...)
	w = append(w, wasmSection(3, 2, 1, 1)...)
	w = append(w, wasmSection(5, 1, 0, 1)...)
	exp := []byte{3}
	exp = append(appendName(exp, "memory"), 0x02, 0)
	exp = append(appendName(exp, abi.ReactorEntry), 0x00, 1)
	exp = append(appendName(exp, abi.SnapshotEntry), 0x00, 2)
	w = append(w, wasmSection(7, exp...)...)
	main := []byte{0, 0x0B}
	// The subscription at 0: tag 0 (clock), clock id 0, timeout ns at
	// 24, flags 0 (relative); the event at 64, the count at 128.
	snap := []byte{0, 0x41, 24}
	snap = append(wasmrewrite.AppendS64(append(snap, 0x42), ns), 0x37, 0x03, 0x00)
	snap = append(snap, 0x41, 0, 0x41, 0xC0, 0x00, 0x41, 1, 0x41, 0x80, 0x01, 0x10, 0, 0x1A, 0x0B)
	code := append([]byte{2, byte(len(main))}, main...)
	code = append(append(code, byte(len(snap))), snap...)
	w = append(w, wasmSection(10, code...)...)
	return appendCustomSection(w, abi.CustomSection, []byte(`{"abiVersion":1,"name":"sleepy"}`))
}

// TestStartUpCutAtItsDeadlineIsNoSnapshot: a start-up whose sleep the
// deadline cut short returns to the guest, which then returns: it reached
// its deadline, so it does not become a snapshot (it used to be
// snapshotted and served).
func TestStartUpCutAtItsDeadlineIsNoSnapshot(t *testing.T) {
	e, err := NewEngine(Config{CacheDir: t.TempDir(), Logger: quietLogger, SnapshotTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	m, err := e.Load(context.Background(), "sleepy", sleepyReactor(int64(5*time.Second)), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	used, reason := m.Snapshot()
	if used || !strings.Contains(reason, "start-up took longer than the deadline of 300ms (--snapshot-timeout)") {
		t.Fatalf("used %v, reason %q; want no snapshot, for the deadline", used, reason)
	}
	// A start-up that sleeps within its deadline is snapshotted.
	m, err = e.Load(context.Background(), "brief", sleepyReactor(int64(time.Millisecond)), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if used, reason := m.Snapshot(); !used {
		t.Fatalf("a brief start-up was not snapshotted: %s", reason)
	}
}

// TestSpinningStartUpHoldsNoCompilationSlot: with one compilation slot, a
// reactor whose start-up spins ends at the snapshot deadline (not its
// 60 s call timeout), and a module loaded meanwhile loads at once: the
// start-up run holds no compilation slot. It used to hold the slot for
// the module's call timeout.
func TestSpinningStartUpHoldsNoCompilationSlot(t *testing.T) {
	e, err := NewEngine(Config{CacheDir: t.TempDir(), Logger: quietLogger, Compilations: 1,
		SnapshotTimeout: 3 * time.Second, Limits: Limits{Timeout: 60 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	spin := tinyReactor(0x03, 0x40, 0x0C, 0x00, 0x0B, 0x0B) // loop br 0 end
	start := time.Now()
	done := make(chan error, 1)
	var spinner *Module
	go func() {
		var err error
		spinner, err = e.Load(context.Background(), "spinner", spin, Policy{})
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the start-up spins
	t0 := time.Now()
	other := tinyReactor(0x41, 42, 0x24, 0, 0x0B)
	if _, err := e.Load(context.Background(), "other", other, Policy{NoSnapshot: true}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); took > 2*time.Second {
		t.Fatalf("a module loaded beside a spinning start-up took %s", took)
	}
	select {
	case <-done:
		t.Fatal("the spinner loaded before the other module: the test proves nothing")
	default:
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the spinning start-up ran %s, past the snapshot deadline of 3s", took)
	}
	used, reason := spinner.Snapshot()
	if used || !strings.Contains(reason, "start-up took longer than the deadline of 3s (--snapshot-timeout)") {
		t.Fatalf("used %v, reason %q", used, reason)
	}
}

// fillingReactor is a reactor whose start-up grows its memory by pages
// and fills them with ones: a snapshot of it carries that image.
func fillingReactor(pages int32) []byte {
	body := append([]byte{0x41}, wasmrewrite.AppendS32(nil, pages)...)
	body = append(body, 0x40, 0x00, 0x1A, 0x41, 0x00, 0x41, 0x01, 0x41)
	body = append(wasmrewrite.AppendS32(body, pages*65536), 0xFC, 0x0B, 0x00, 0x0B)
	return tinyReactor(body...)
}

// TestSnapshotImageCap: a start-up that keeps more memory than
// snapshot_max_memory runs without a snapshot, saying why; one within it
// runs from its snapshot, and its memory image counts apart from the code
// budget, so it does not close other modules' code (its 4 MiB image under
// a 1 MiB code budget used to close the neighbour's code on every load).
func TestSnapshotImageCap(t *testing.T) {
	var logs syncBuffer
	e, err := NewEngine(Config{CacheDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, nil)), CodeMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	big := fillingReactor(64) // 4 MiB of ones
	m, err := e.Load(context.Background(), "capped", big, Policy{SnapshotMaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	used, reason := m.Snapshot()
	if used || !strings.Contains(reason, "more than the 1MiB of snapshot_max_memory") {
		t.Fatalf("used %v, reason %q; want no snapshot over the cap", used, reason)
	}
	if !strings.Contains(logs.String(), "module runs without a snapshot") {
		t.Fatalf("no log line for the fall back:\n%s", logs.String())
	}

	neighbour := tinyReactor(0x41, 42, 0x24, 0, 0x0B)
	n, err := e.Open(context.Background(), "neighbour", neighbour, ModuleHash(neighbour), Policy{NoSnapshot: true},
		func() ([]byte, error) { return neighbour, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Compile(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, err = e.Load(context.Background(), "snapped", big, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if used, reason := m.Snapshot(); !used {
		t.Fatalf("within the default cap, not snapshotted: %s", reason)
	}
	fp := m.Footprint()
	if fp.Snapshot < 4<<20 || fp.Code > 1<<20 {
		t.Fatalf("footprint %+v: want the 4 MiB image apart from the code", fp)
	}
	if used, budget := e.CodeMemory(); used > budget {
		t.Fatalf("the code budget counts %d of %d bytes: the image is in it", used, budget)
	}
	if !n.Compiled() {
		t.Fatal("the snapshot's image closed the neighbour's code")
	}
}

// TestSnapshotImageRestoredEveryCall: what a call changes in the state
// start-up built (a map, a string, a counter), in memory the image leaves
// zero (a global array, a heap slice), and in memory it grows and fills,
// is gone in the next call — in calls one after another, which
// reuse the memories their predecessors returned (imagePool), and at
// once.
func TestSnapshotImageRestoredEveryCall(t *testing.T) {
	m := loadSnapshotProbe(t, newEngine(t, Limits{}), Policy{Env: []EnvVar{{Name: "PROBE_ENV", Value: "at-init"}}})
	const want = "a=1 b=2 len=8 env=at-init calls=0"
	check := func() error {
		if got, err := callTool(t, m, nil, "scribble", "{}"); err != nil || got != fmt.Sprint(0xA5<<16+1<<20) {
			return fmt.Errorf("scribble: %q, %v", got, err)
		}
		if got, err := callTool(t, m, nil, "scratchsum", "{}"); err != nil || got != "0" {
			return fmt.Errorf("after a call filled a global that is zero at start-up, the next sees a sum of %q (%v); want 0", got, err)
		}
		if got, err := callTool(t, m, nil, "mutate", "{}"); err != nil || got != "8388608" {
			return fmt.Errorf("mutate: %q, %v", got, err)
		}
		if got, err := callTool(t, m, nil, "startup", "{}"); err != nil || got != want {
			return fmt.Errorf("after a call changed it, start-up's state is %q (%v); want %q", got, err, want)
		}
		return nil
	}
	for i := 0; i < 5; i++ {
		if err := check(); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- check()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestStartUpsTakeTurns: with one compilation slot, an honest reactor
// loaded behind four spinning start-ups waits for a quantum of each (one
// goes on in the long lane, the others give way and are taken again
// later; the quantum is 250 ms here), not for their deadline: it waited for four deadlines (27 s at
// the default 5 s) before. The spinners' deadline here is 30 s; the honest
// module must load, with its snapshot, in far less.
func TestStartUpsTakeTurns(t *testing.T) {
	e, err := NewEngine(Config{CacheDir: t.TempDir(), Logger: quietLogger, Compilations: 1,
		SnapshotTimeout: 30 * time.Second, Limits: Limits{Timeout: 60 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	e.snapRetry = time.Hour                   // no spinner is taken again during the test
	e.starts.quantum = 250 * time.Millisecond // a quarter of the default, for a short test
	t.Cleanup(func() { e.Close(context.Background()) })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })               // the spinner in the long lane stops
	spin := tinyReactor(0x03, 0x40, 0x0C, 0x00, 0x0B, 0x0B) // loop br 0 end
	gaveWay := make(chan string, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := e.Load(ctx, fmt.Sprintf("spin%d", i), spin, Policy{})
			if err == nil {
				_, why := m.Snapshot()
				gaveWay <- why
				m.Close(context.Background())
			}
		}()
		time.Sleep(20 * time.Millisecond) // queued in this order
	}
	time.Sleep(100 * time.Millisecond)
	hctx, hcancel := context.WithTimeout(ctx, 25*time.Second)
	defer hcancel()
	t0 := time.Now()
	m, err := e.Load(hctx, "honest", tinyReactor(0x41, 42, 0x24, 0, 0x0B), Policy{})
	took := time.Since(t0)
	if err != nil {
		t.Fatalf("the honest reactor behind four spinning start-ups: %v, after %s", err, took)
	}
	if used, why := m.Snapshot(); !used {
		t.Fatalf("the honest reactor has no snapshot: %s", why)
	}
	t.Logf("the honest reactor loaded in %s behind four spinning start-ups (their deadline 30s)", took)
	if took > 15*time.Second {
		t.Fatalf("the honest reactor loaded in %s", took)
	}
	select {
	case why := <-gaveWay:
		if !strings.Contains(why, "gave way to other start-ups") {
			t.Fatalf("a spinner's reason: %q", why)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no spinner gave way")
	}
}

// TestStartEnvSeenByStartUpOnly: Policy.StartEnv reaches a start-up (the
// snapshot's, or every instance's without a snapshot) like Env, and is
// part of the snapshot key, so a changed value (a script's new source)
// takes a new snapshot rather than serving the old one.
func TestStartEnvSeenByStartUpOnly(t *testing.T) {
	p := Policy{StartEnv: []EnvVar{{Name: "PROBE_ENV", Value: "at-start"}}}
	if a := randomFields(t, loadSnapshotProbe(t, newEngine(t, Limits{}), p)); a["env"] != "at-start" {
		t.Errorf("from a snapshot: env=%q, want the start-up's at-start", a["env"])
	}
	wasm, err := reactorProbe()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := newEngine(t, Limits{}).Load(context.Background(), "probe", wasm, Policy{NoSnapshot: true, StartEnv: p.StartEnv})
	if err != nil {
		t.Fatal(err)
	}
	if a := randomFields(t, plain); a["env"] != "at-start" {
		t.Errorf("without a snapshot: env=%q, want at-start in every instance", a["env"])
	}
	q := Policy{StartEnv: []EnvVar{{Name: "PROBE_ENV", Value: "changed"}}}
	if snapshotKey(wasm, "probe", p) == snapshotKey(wasm, "probe", q) {
		t.Error("the snapshot key does not cover StartEnv: a changed script would keep its old snapshot")
	}
	if snapshotKey(wasm, "probe", p) == snapshotKey(wasm, "probe", Policy{Env: p.StartEnv}) {
		t.Error("the snapshot key does not tell StartEnv from Env")
	}
}
