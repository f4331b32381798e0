package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// instrumented reports whether the module's current code was instrumented.
func (m *Module) instrumented() bool {
	m.slot.mu.Lock()
	defer m.slot.mu.Unlock()
	return m.slot.c != nil && m.slot.c.interrupt
}

// countingSource returns wasm and counts how often it was read.
func countingSource(wasm []byte) (func() ([]byte, error), *atomic.Int64) {
	var n atomic.Int64
	return func() ([]byte, error) { n.Add(1); return wasm, nil }, &n
}

// describedEngine is an engine whose description cache holds the probe's
// description (a previous engine loaded it), so Open does not compile.
func describedEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	loadProbe(t, newEngine(t, Limits{}), Policy{})
	cfg.CacheDir, cfg.Logger = testCache, quietLogger
	e, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

func TestOpenListsWithoutCompiling(t *testing.T) {
	skipLongInShort(t)
	e := describedEngine(t, Config{})
	src, _ := countingSource(probeWasm)
	m, err := e.Open(context.Background(), "probe", probeWasm, "", Policy{}, src)
	if err != nil {
		t.Fatal(err)
	}
	if m.Compiled() || e.built.Load() != 0 || m.Description().Name != "probe" {
		t.Fatalf("compiled %v, compilations %d, description %q: want a described module not compiled", m.Compiled(), e.built.Load(), m.Description().Name)
	}
	if _, ok := m.Schemas("count"); !ok {
		t.Fatal("the described module has no schemas for its tools")
	}
	// Concurrent first calls share one compilation.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := callTool(t, m, nil, "count", "{}"); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if !m.Compiled() || e.built.Load() != 1 {
		t.Fatalf("compiled %v after 8 first calls, %d compilations; want compiled once", m.Compiled(), e.built.Load())
	}
	if f := m.Footprint(); !f.Compiled || f.Code < int64(len(probeWasm)) || f.Description == 0 {
		t.Fatalf("footprint %+v", f)
	}
}

func TestOpenRefusesAnInvalidModuleAtItsFirstCall(t *testing.T) {
	e := newEngine(t, Limits{})
	bad := []byte("\x00asm\x01\x00\x00\x00 not a module")
	desc := `{"abiVersion":1,"name":"bad","tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
	sum := hexSum(bad)
	e.descs.put(sum, []byte(desc))
	src, _ := countingSource(bad)
	m, err := e.Open(context.Background(), "bad", bad, "", Policy{}, src)
	if err != nil {
		t.Fatalf("a module with a cached description is listed before it is compiled: %v", err)
	}
	for i := range 2 {
		_, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(`{"name":"t","arguments":{}}`), nil)
		if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), "does not compile") {
			t.Fatalf("call %d: %v; want a load error", i, err)
		}
	}
	// Refused for good: the second call does not compile it again (the
	// host's structural check refuses these bytes before wazero sees them).
	if m.Refused() == nil || e.built.Load() > 1 {
		t.Fatalf("refused %v, %d compilations; want refused after at most one", m.Refused(), e.built.Load())
	}
}

func TestOpenCompilesTheVersionItListed(t *testing.T) {
	e := describedEngine(t, Config{})
	changed := func() ([]byte, error) { return []byte("other bytes"), nil }
	m, err := e.Open(context.Background(), "probe", probeWasm, "", Policy{}, changed)
	if err != nil {
		t.Fatal(err)
	}
	// The file changed, but the engine kept a copy of the version listed.
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
		t.Fatalf("call after the file changed: %q %v", got, err)
	}
	// Without the copy, the call fails clearly and the module is not
	// refused: the file changing is not the module's fault.
	if err := os.Remove(e.descs.modulePath(m.Hash())); err != nil {
		t.Fatal(err)
	}
	m2, err := e.Open(context.Background(), "probe", probeWasm, "", Policy{}, changed)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(e.descs.modulePath(m.Hash()))
	if _, err := callTool(t, m2, nil, "count", "{}"); err == nil || !strings.Contains(err.Error(), "changed since it was listed") {
		t.Fatalf("got %v; want the call to fail", err)
	}
	if m2.Refused() != nil {
		t.Fatal("a changed file is not the module's fault")
	}
}

func TestCodeBudgetClosesLeastRecentlyCalled(t *testing.T) {
	// A budget of one probe: compiling the second closes the first.
	e := describedEngine(t, Config{CodeMemory: codeCost(probeWasm) + 1})
	a, b := openTwo(t, e)
	if _, err := callTool(t, a, nil, "count", "{}"); err != nil {
		t.Fatal(err)
	}
	if _, err := callTool(t, b, nil, "count", "{}"); err != nil {
		t.Fatal(err)
	}
	if a.Compiled() || !b.Compiled() {
		t.Fatalf("a compiled %v, b compiled %v; want a closed for b", a.Compiled(), b.Compiled())
	}
	if used, limit := e.CodeMemory(); used > limit {
		t.Fatalf("code memory %d over its budget %d", used, limit)
	}
	// a compiles again on its next call.
	if got, err := callTool(t, a, nil, "count", "{}"); err != nil || got != "1" || e.built.Load() != 3 {
		t.Fatalf("a again: %q %v, %d compilations (want 3)", got, err, e.built.Load())
	}
}

func TestCodeBudgetNeverClosesCodeInUse(t *testing.T) {
	e := describedEngine(t, Config{CodeMemory: 1})
	a, b := openTwo(t, e)
	code, held, err := a.slot.acquire(context.Background(), a, true) // a call running on a
	if err != nil {
		t.Fatal(err)
	}
	if _, err := callTool(t, b, nil, "count", "{}"); err != nil {
		t.Fatal(err)
	}
	if !a.Compiled() {
		t.Fatal("the code of a running call was closed")
	}
	if _, err := a.callWith(context.Background(), code, abi.MethodToolsCall, []byte(`{"name":"count","arguments":{}}`), nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	a.slot.release(a, code, held)
	if a.Compiled() && b.Compiled() {
		t.Fatal("over budget after the call ended: want one of them closed")
	}
}

// spinNoDescription is spinModule without its description: its describe
// run spins.
func spinNoDescription() []byte {
	m := spinModule()
	return m[:bytes.Index(m, []byte("wasmcp.describe"))-3]
}

func TestDescribeHasItsOwnBudget(t *testing.T) {
	e, err := NewEngine(Config{CacheDir: "-", Logger: quietLogger, DescribeTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	start := time.Now()
	_, err = e.Load(context.Background(), "spin", spinNoDescription(), Policy{})
	if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), "describe failed") {
		t.Fatalf("got %v; want describe to fail", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("describe took %s: the module's 60 s timeout, not the describe budget", d)
	}
}

func TestCompilationWaitIsCanceledWithTheCall(t *testing.T) {
	e := describedEngine(t, Config{Compilations: 1})
	release, _ := e.pool.acquire(context.Background()) // the pool is busy
	src, _ := countingSource(probeWasm)
	m, _ := e.Open(context.Background(), "probe", probeWasm, "", Policy{}, src)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := m.Call(ctx, abi.MethodToolsCall, []byte(`{"name":"count","arguments":{}}`), nil)
	if !errors.Is(err, context.DeadlineExceeded) || !IsKind(err, KindCanceled) {
		t.Fatalf("got %v; want the call canceled while waiting", err)
	}
	release()
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
		t.Fatalf("after the pool freed: %q %v", got, err)
	}
}

func TestWarmUpIsTheFirstCallsCompilation(t *testing.T) {
	e := describedEngine(t, Config{})
	src := func() ([]byte, error) { return nil, errors.New("the first call must not read the module") }
	m, err := e.Open(context.Background(), "probe", probeWasm, "", Policy{}, src)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(e.descs.modulePath(m.Hash())) // only WarmUp's bytes can compile it
	m.WarmUp(probeWasm)
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" || e.built.Load() != 1 {
		t.Fatalf("call: %q %v, %d compilations; want one, WarmUp's", got, err, e.built.Load())
	}
}

func TestOpenKnownNeedsTheCachedCopy(t *testing.T) {
	ctx := context.Background()
	hash := ModuleHash(probeWasm)
	// Without an on-disk cache nothing is known.
	mem, err := NewEngine(Config{CacheDir: "-", Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close(ctx)
	if m, ok, err := mem.OpenKnown(ctx, "probe", hash, Policy{}, nil); ok || m != nil || err != nil || mem.CacheDir() != "" {
		t.Fatalf("in-memory cache: %v %v %v %q", m, ok, err, mem.CacheDir())
	}
	// A hash the cache does not hold is not known.
	e := describedEngine(t, Config{})
	if e.CacheDir() != testCache {
		t.Fatalf("CacheDir %q", e.CacheDir())
	}
	if _, ok, _ := e.OpenKnown(ctx, "probe", strings.Repeat("0", 64), Policy{}, nil); ok {
		t.Fatal("an unknown hash was opened")
	}
	// Once Open kept its copy, the module opens by hash alone and its
	// first call compiles from that copy, never reading the source.
	src, reads := countingSource(probeWasm)
	if _, err := e.Open(ctx, "probe", probeWasm, "", Policy{}, src); err != nil {
		t.Fatal(err)
	}
	m, ok, err := e.OpenKnown(ctx, "probe", hash, Policy{}, src)
	if !ok || err != nil || m.Compiled() || m.Description().Name != "probe" {
		t.Fatalf("OpenKnown: ok %v err %v", ok, err)
	}
	defer m.Close(ctx)
	if err := m.Compile(ctx); err != nil {
		t.Fatal(err)
	}
	if reads.Load() != 0 {
		t.Fatalf("the source was read %d times", reads.Load())
	}
}

func TestRecompileAfterEvictionValidatesOnce(t *testing.T) {
	skipLongInShort(t)
	// A budget of one probe: each call of the other closes a module's code.
	e := describedEngine(t, Config{CodeMemory: codeCost(probeWasm) + 1, InstrumentLoops: true})
	a, b := openTwo(t, e)
	step := func(m *Module, wantCompiles int64) {
		t.Helper()
		if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
			t.Fatalf("%s: %q %v", m.name, got, err)
		}
		if !m.instrumented() {
			t.Fatalf("%s: not instrumented", m.name)
		}
		if got := e.compiles.Load(); got != wantCompiles {
			t.Fatalf("%s: %d wazero compilations in all, want %d", m.name, got, wantCompiles)
		}
	}
	// A first compilation validates the module as given, then compiles the
	// instrumented one.
	step(a, 2)
	step(b, 4)
	if a.Compiled() {
		t.Fatal("a's code was not closed")
	}
	// Compiled again after the budget closed it: the same bytes, validated
	// already: only the instrumented module.
	step(a, 5)
	// Bytes other than those validated (here: a snapshot's, say) are
	// validated again.
	b.slot.mu.Lock()
	b.slot.valid = "snapshot 00"
	b.slot.mu.Unlock()
	step(b, 7)
}

func TestCodeBudgetCollectsClosedCode(t *testing.T) {
	// wazero unmaps closed code only in a finalizer: the budget starts a
	// collection once an eighth of it has been closed since the last one.
	b := newCodeBudget(800, func(string, ...any) {})
	done := make(chan struct{}, 10)
	b.collect = func() { done <- struct{}{} }
	b.closed(50)
	select {
	case <-done:
		t.Fatal("a collection after 50 of 800 bytes closed")
	case <-time.After(50 * time.Millisecond):
	}
	b.closed(50)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no collection after 100 of 800 bytes closed")
	}
	// Through the budget: with room for one probe, calling two in turn
	// closes one each time.
	e := describedEngine(t, Config{CodeMemory: codeCost(probeWasm) + 1})
	var n atomic.Int64
	e.code.collect = func() { n.Add(1) }
	a, bm := openTwo(t, e)
	for _, m := range []*Module{a, bm, a} {
		if _, err := callTool(t, m, nil, "count", "{}"); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); n.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("closing code over the budget started no collection")
		}
	}
}

// openTwo opens the probe twice, as modules "a" and "b", each able to
// compile again from its own source.
func openTwo(t *testing.T, e *Engine) (a, b *Module) {
	t.Helper()
	var ms [2]*Module
	for i, name := range []string{"a", "b"} {
		src, _ := countingSource(probeWasm)
		m, err := e.Open(context.Background(), name, probeWasm, "", Policy{}, src)
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = m
	}
	return ms[0], ms[1]
}

// TestLoadsWaitForRoomInTheCodeBudget loads more modules at once than the
// code budget has room for: each load's build takes its room before it
// starts, so the code counted and the loads' room never pass the budget;
// the loads beyond it wait their turn, and every one loads.
func TestLoadsWaitForRoomInTheCodeBudget(t *testing.T) {
	skipLongInShort(t)
	size := codeCost(probeWasm)
	const k = 6
	e, err := NewEngine(Config{CacheDir: testCache, Logger: quietLogger, Compilations: k, CodeMemory: 2*size + size/2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	e.beforeBuild = func(string, tier) error {
		time.Sleep(100 * time.Millisecond) // the loads overlap
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Loaded as Open loads a new module: its code can be
			// compiled again, so the budget may close it.
			src, _ := countingSource(probeWasm)
			if _, err := e.load(context.Background(), fmt.Sprintf("probe%d", i), probeWasm, "", Policy{}, src); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a load failed for want of room (it must wait): %v", err)
	}
	peak, waited := e.code.loadStats()
	_, limit := e.CodeMemory()
	if peak > limit || waited == 0 {
		t.Fatalf("code and loads' room peaked at %d of a budget of %d, %d loads waited; want within the budget, some waiting", peak, limit, waited)
	}
	e.code.mu.Lock()
	loading := e.code.loading
	e.code.mu.Unlock()
	if loading != 0 {
		t.Fatalf("%d bytes of room still taken after every load ended", loading)
	}
}

// TestLoadLargerThanTheCodeBudgetLoads: a module whose load needs more
// room than the whole budget waits for the other loads to end, then
// loads alone; none fails.
func TestLoadLargerThanTheCodeBudgetLoads(t *testing.T) {
	skipLongInShort(t)
	e, err := NewEngine(Config{CacheDir: testCache, Logger: quietLogger, Compilations: 3, CodeMemory: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Load(context.Background(), fmt.Sprintf("probe%d", i), probeWasm, Policy{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, waited := e.code.loadStats(); waited == 0 {
		t.Fatal("no load waited: want them one at a time")
	}
}

// TestLoadsWaitingCounted: a load waiting for room in the code budget is
// what Engine.LoadsWaiting reports (the wasmcp_loads_waiting metric and
// wasmcp status), until room comes free.
func TestLoadsWaitingCounted(t *testing.T) {
	e, err := NewEngine(Config{CacheDir: "-", Logger: quietLogger, CodeMemory: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	first, err := e.code.reserve(context.Background(), "a", 80)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := e.code.reserve(context.Background(), "b", 50)
		r.release()
		got <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for e.LoadsWaiting() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("LoadsWaiting = %d with a load waiting; want 1", e.LoadsWaiting())
		}
		time.Sleep(time.Millisecond)
	}
	first.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n := e.LoadsWaiting(); n != 0 {
		t.Fatalf("LoadsWaiting = %d once the load got its room; want 0", n)
	}
}

func TestCodeOfAClosedModuleIsNotCounted(t *testing.T) {
	// A build that ends after its module closed (the compiled tier's,
	// or code compiled again after the budget closed it) is counted
	// once Close stopped counting the module (Module.Close, then
	// codeBudget.added): left counted, it would stay so for good (trim
	// never closes a closed module's code) and every later load would
	// wait for room that never comes free.
	b := newCodeBudget(1000, func(string, ...any) {})
	m := &Module{name: "closed"}
	m.slot.closed = true
	room, err := b.reserve(context.Background(), m.name, 600)
	if err != nil {
		t.Fatal(err)
	}
	b.added(m, &compiled{size: 600, room: room})
	if used, _ := b.usage(); used != 0 {
		t.Fatalf("a closed module's code counted: %d bytes", used)
	}
	b.mu.Lock()
	loading := b.loading
	b.mu.Unlock()
	if loading != 0 {
		t.Fatalf("its build's room not given back: %d bytes", loading)
	}
	// Two loads fit side by side again, neither waiting.
	for _, name := range []string{"x", "y"} {
		r, err := b.reserve(context.Background(), name, 400)
		if err != nil {
			t.Fatal(err)
		}
		defer r.release()
	}
	if _, waited := b.loadStats(); waited != 0 {
		t.Fatalf("%d loads waited", waited)
	}
}
