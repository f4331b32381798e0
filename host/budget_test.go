package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// principalKey keeps a test call's principal in its context, as an
// authentication layer would.
type principalKey struct{}

// testPrincipal is Config.Principal for the tests' calls.
func testPrincipal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// callAs is callTool with the caller's principal in the context.
func callAs(t testing.TB, m *Module, principal, name, args string) (string, error) {
	t.Helper()
	ctx := context.Background()
	if principal != "" {
		ctx = context.WithValue(ctx, principalKey{}, principal)
	}
	return toolText(t, m, ctx, fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args), nil)
}

// budgetEngine is an engine with the given memory budget (a default
// memory cap of 256 MiB) and a short wait for it.
func budgetEngine(t *testing.T, budget int64) *Engine {
	t.Helper()
	e, err := NewEngine(Config{CacheDir: testCache, Logger: quietLogger, MemoryBudget: budget, BudgetWait: 300 * time.Millisecond, Principal: testPrincipal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// sleepers starts n calls of the sleep tool for ms and waits until the
// engine's budget holds what they take; the returned function waits for
// them to end and returns their errors.
func sleepers(t *testing.T, e *Engine, m *Module, principal string, n, ms int) func() []error {
	t.Helper()
	before := e.mem.usage()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = callAs(t, m, principal, "sleep", fmt.Sprintf(`{"n":%d}`, ms))
		}()
	}
	// Each takes at least its stack's charge once admitted.
	for deadline := time.Now().Add(10 * time.Second); e.mem.usage()-before < int64(n)*stackBytes; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sleepers hold %d bytes of the budget, want %d", e.mem.usage()-before, int64(n)*stackBytes)
		}
	}
	time.Sleep(100 * time.Millisecond) // let a late one reach its sleep
	return func() []error { wg.Wait(); return errs }
}

// TestSleepingCallsDoNotStarveANeighbour: calls that sleep hold what they
// use (their stack's reach and a few MiB of memory), not their memory cap,
// so under a 1.25 GiB budget three sleep at once and a neighbour module is
// served beside them. The budget used to charge each call its 256 MiB cap
// and its stack (about 424 MiB): three sleepers took it all and the
// neighbour waited, then failed "busy".
func TestSleepingCallsDoNotStarveANeighbour(t *testing.T) {
	skipLongInShort(t)
	e := budgetEngine(t, 1280<<20)
	a := loadProbe(t, e, Policy{})
	b, err := e.Load(context.Background(), "neighbour", probeWasm, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	wait := sleepers(t, e, a, "", 3, 2000)
	start := time.Now()
	if got, err := callAs(t, b, "", "sleep", `{"n":1}`); err != nil || got != "slept" {
		t.Fatalf("the neighbour beside three sleepers: %q, %v", got, err)
	}
	t.Logf("the neighbour was served in %s; the budget holds %d MiB of %d MiB", time.Since(start).Round(time.Millisecond),
		e.mem.usage()>>20, e.mem.total>>20)
	for _, err := range wait() {
		if err != nil {
			t.Errorf("sleeper: %v", err)
		}
	}
	if u := e.mem.usage(); u != 0 {
		t.Fatalf("the budget holds %d bytes after every call ended", u)
	}
}

// TestModuleShareOfTheBudget: one module's calls hold at most half the
// budget; its next call waits for room and then is busy, naming the share,
// while another module is served; once the sleepers end it runs again.
func TestModuleShareOfTheBudget(t *testing.T) {
	e := budgetEngine(t, 1280<<20)
	a := loadProbe(t, e, Policy{})
	b, err := e.Load(context.Background(), "neighbour", probeWasm, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	wait := sleepers(t, e, a, "", 3, 1500)
	_, err = callAs(t, a, "", "sleep", `{"n":1}`)
	if !IsKind(err, KindLimit) || !strings.Contains(err.Error(), "busy: module probe's running calls hold its share (half) of the server's memory budget") {
		t.Fatalf("a fourth call of the same module: %v, want busy on its share", err)
	}
	if got, err := callAs(t, b, "", "sleep", `{"n":1}`); err != nil || got != "slept" {
		t.Fatalf("the neighbour: %q, %v", got, err)
	}
	wait()
	if got, err := callAs(t, a, "", "sleep", `{"n":1}`); err != nil || got != "slept" {
		t.Fatalf("after the sleepers: %q, %v", got, err)
	}
}

// TestPrincipalShareOfTheBudget: one principal's calls, over two modules,
// hold at most half the budget; another principal is served on the same
// modules.
func TestPrincipalShareOfTheBudget(t *testing.T) {
	e := budgetEngine(t, 2<<30)
	a := loadProbe(t, e, Policy{})
	b, err := e.Load(context.Background(), "second", probeWasm, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	w1 := sleepers(t, e, a, "mallory", 3, 1500)
	w2 := sleepers(t, e, b, "mallory", 2, 1500)
	_, err = callAs(t, b, "mallory", "sleep", `{"n":1}`)
	if !IsKind(err, KindLimit) || !strings.Contains(err.Error(), "the calls of mallory hold their share (half)") {
		t.Fatalf("mallory's sixth call: %v, want busy on her share", err)
	}
	for _, m := range []*Module{a, b} {
		if got, err := callAs(t, m, "alice", "sleep", `{"n":1}`); err != nil || got != "slept" {
			t.Fatalf("alice beside mallory's calls on %s: %q, %v", m.Name(), got, err)
		}
	}
	w1()
	w2()
}

// TestMemoryGrowBeyondTheBudgetFails: a call whose memory grows past what
// the budget has left is refused the growth (the guest's allocation
// fails) and the call fails with a limit error naming the budget; a call
// that fits runs. Under the old budget the 256 MiB cap fitted and the
// growth was never refused.
func TestMemoryGrowBeyondTheBudgetFails(t *testing.T) {
	skipLongInShort(t)
	e := budgetEngine(t, 600<<20)
	m := loadProbe(t, e, Policy{})
	if got, err := callAs(t, m, "", "alloc", `{"n":32}`); err != nil || got != "32" {
		t.Fatalf("32 MiB: %q, %v", got, err)
	}
	_, err := callAs(t, m, "", "alloc", `{"n":200}`)
	if !IsKind(err, KindLimit) || !strings.Contains(err.Error(), "its memory could not grow to") ||
		!strings.Contains(err.Error(), "more than the half of the server's memory budget of 600MiB") ||
		!strings.Contains(err.Error(), "(--memory-budget)") {
		t.Fatalf("200 MiB under a 600 MiB budget: %v, want the budget's refusal", err)
	}
	if errors.Is(err, errMemoryBudget) {
		t.Fatalf("a growth past the module's share alone is marked as one that may fit later: %v", err)
	}
	t.Log(err)
	if u := e.mem.usage(); u != 0 {
		t.Fatalf("the budget holds %d bytes after the calls", u)
	}
	// The module stays usable.
	if got, err := callAs(t, m, "", "alloc", `{"n":1}`); err != nil || got != "1" {
		t.Fatalf("after the refusal: %q, %v", got, err)
	}
}

// TestInstanceOverTheShareIsRefusedAtLoad: a module one instance of which
// takes more than one module's share at its start is refused at load.
func TestInstanceOverTheShareIsRefusedAtLoad(t *testing.T) {
	e := budgetEngine(t, 300<<20)
	_, err := e.Load(context.Background(), "huge", probeWasm, Policy{})
	if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), "more than the half of the server's memory budget") {
		t.Fatalf("got %v, want the load refusal", err)
	}
}

func TestDefaultMemoryBudgetSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if n, err := cgroupLimit(write("max1", "1073741824\n")); err != nil || n != 1<<30 {
		t.Fatalf("cgroup limit: %d, %v", n, err)
	}
	if _, err := cgroupLimit(write("max2", "max\n")); err == nil {
		t.Fatal(`"max" read as a limit`)
	}
	if n, err := memTotal(write("meminfo", "MemTotal:       24683548 kB\nMemFree: 1 kB\n")); err != nil || n != 24683548<<10 {
		t.Fatalf("meminfo: %d, %v", n, err)
	}
	if DefaultMemoryBudget() <= 0 {
		t.Fatal("no default budget")
	}
}

// recursionModule is a module whose _start calls a function that calls
// itself without end: (func $r (param i64) (result i64) (i64.add (call $r
// (i64.add (local.get 0) (i64.const 1))) (local.get 0))).
func recursionModule() []byte {
	e := wasmrewrite.NewEncoder(64)
	e.Section(wasmrewrite.SecType, []byte{2, 0x60, 0, 0, 0x60, 1, 0x7E, 1, 0x7E})
	e.Section(wasmrewrite.SecFunction, []byte{2, 0, 1})
	e.Section(wasmrewrite.SecExport, append(wasmrewrite.AppendName([]byte{1}, "_start"), 0, 0))
	e.Section(wasmrewrite.SecCode, []byte{2,
		7, 0, 0x42, 0x00, 0x10, 0x01, 0x1A, 0x0B,
		12, 0, 0x20, 0x00, 0x42, 0x01, 0x7C, 0x10, 0x01, 0x20, 0x00, 0x7C, 0x0B})
	return e.Bytes()
}

// TestStackWithinItsCharge runs unbounded recursion in wazero's compiler
// and samples the Go heap while the stack grows to its ceiling: the stack
// goes past wazeroStackCeiling (so the charge is not idle caution) and
// never holds more than stackBytes, what instanceCost charges for it. It
// fails when a wazero upgrade moves the ceiling.
func TestStackWithinItsCharge(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	code, err := r.CompileModule(ctx, recursionModule())
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	_, err = r.InstantiateModule(ctx, code, wazero.NewModuleConfig().WithStartFunctions("_start"))
	runtime.ReadMemStats(&ms)
	close(stop)
	<-sampled
	peak = max(peak, ms.HeapInuse)
	if err == nil || !strings.Contains(err.Error(), "stack overflow") {
		t.Fatalf("want a stack overflow, got %v", err)
	}
	grew := int64(peak) - int64(base)
	t.Logf("the stack took the heap %d MB above its base; the charge is %d MB", grew/1_000_000, stackBytes/1_000_000)
	if grew < wazeroStackCeiling {
		t.Errorf("the heap grew %d bytes, less than wazero's stack ceiling %d: has the ceiling moved?", grew, wazeroStackCeiling)
	}
	// HeapInuse is the whole process's: what other goroutines allocate
	// while the recursion runs lands in it too (a CI run measured 169 MB
	// once, 148 MB usually). A tenth of slack keeps that noise out; a moved
	// ceiling (wazero doubles the stack, so the next step is twice as
	// large) still fails.
	if slack := int64(stackBytes) / 10; grew > int64(stackBytes)+slack {
		t.Errorf("the heap grew %d bytes, more than the %d charged for a call's stack (plus %d of slack)", grew, stackBytes, slack)
	}
	if c := instanceCost(DefaultLimits(), nil); c < stackBytes {
		t.Errorf("instanceCost %d does not count the stack", c)
	}
}

// TestDescribeWaitsForTheBudget: a module loaded while running calls hold
// the whole budget is not refused: its describe run waits for room (its
// deadline, shorter than the wait, starting once it is admitted) and the
// module loads once the calls end. It used to wait BudgetWait and be
// refused as busy.
func TestDescribeWaitsForTheBudget(t *testing.T) {
	skipLongInShort(t)
	// Another module (the probe with a custom section more): its
	// description is in no cache, so it runs its describe; its code is
	// compiled once beforehand, so that its load is its describe run.
	late := append(append([]byte(nil), probeWasm...), 0, 6, 4, 'l', 'a', 't', 'e', 1)
	warm, err := NewEngine(Config{CacheDir: testCache, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Load(context.Background(), "late", late, Policy{}); err != nil {
		t.Fatal(err)
	}
	warm.Close(context.Background())
	if err := os.Remove(filepath.Join(testCache, "describe", ModuleHash(late)+".json")); err != nil {
		t.Fatal(err)
	}

	var logs syncBuffer
	e, err := NewEngine(Config{CacheDir: testCache, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		MemoryBudget: 1 << 30, BudgetWait: 300 * time.Millisecond, DescribeTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	var waits []func() []error
	var cost int64
	for i, n := range []int{2, 2, 1} {
		m, err := e.Load(context.Background(), fmt.Sprintf("sleeper%d", i), probeWasm, Policy{})
		if err != nil {
			t.Fatal(err)
		}
		cost = m.slot.c.cost
		waits = append(waits, sleepers(t, e, m, "", n, 20000))
	}
	e.mem.mu.Lock()
	why, _ := e.mem.room(&memCharge{module: "late"}, cost)
	e.mem.mu.Unlock()
	if why == "" {
		t.Fatalf("the sleepers leave room for one more call (%d MiB held): the test proves nothing", e.mem.usage()>>20)
	}
	start := time.Now()
	m, err := e.Load(context.Background(), "late", late, Policy{})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("the module loaded while the budget was held: %v", err)
	}
	if !strings.Contains(logs.String(), "a run at load waited for room in the memory budget") {
		t.Fatalf("the describe run did not wait (took %s): the test proves nothing\n%s", took, logs.String())
	}
	t.Logf("the load took %s, the describe deadline is 500ms", took.Round(time.Millisecond))
	for _, w := range waits {
		w()
	}
	if got, err := callAs(t, m, "", "sleep", `{"n":1}`); err != nil || got != "slept" {
		t.Fatalf("its call: %q, %v", got, err)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use (a log's sink).
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

// TestNoTenantCornersTheBudget: calls of three modules, from two callers,
// take every place the budget has for them (the same slow code under
// three names, issue 37); a fourth module of the catalog, with no call
// running, is admitted at once, in the room kept for it, and so is a fifth
// once the fourth's call ends. Before, the three modules' calls held the
// whole budget (each within its half) and the fourth waited for one of
// them to end ("busy … waited 5s").
func TestNoTenantCornersTheBudget(t *testing.T) {
	const mib = 1 << 20
	b := newMemBudget(1024*mib, 50*time.Millisecond)
	cost := int64(177 * mib)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		b.register(&Module{name: name}, cost)
	}
	var held []*memCharge
	for round := 0; ; round++ {
		admitted := 0
		for i, mod := range []string{"a", "b", "c"} {
			ch := &memCharge{module: mod, principal: []string{"p1", "p2"}[(round+i)%2]}
			if err := b.acquire(context.Background(), ch, cost, 10*time.Millisecond); err == nil {
				held = append(held, ch)
				admitted++
			}
		}
		if admitted == 0 {
			break
		}
	}
	if len(held) < 3 {
		t.Fatalf("only %d calls of the three modules were admitted", len(held))
	}
	// A call of a waits meanwhile: the newcomer is not queued behind it.
	waiting := make(chan error, 1)
	go func() { waiting <- b.acquire(context.Background(), &memCharge{module: "a"}, cost, 5*time.Second) }()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	d := &memCharge{module: "d", principal: "p3"}
	if err := b.acquire(context.Background(), d, cost, time.Second); err != nil {
		t.Fatalf("the fourth module's call beside %d others: %v", len(held), err)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Fatalf("the fourth module's call waited %s", took)
	}
	// A second call of d is an ordinary call: it waits for room.
	if err := b.acquire(context.Background(), &memCharge{module: "d"}, cost, 10*time.Millisecond); err == nil {
		t.Fatal("a second call of the fourth module was admitted in the room kept for others")
	}
	b.release(d)
	if err := b.acquire(context.Background(), &memCharge{module: "e"}, cost, 10*time.Millisecond); err != nil {
		t.Fatalf("a fifth module after the fourth's call ended: %v", err)
	}
	for _, ch := range held {
		b.release(ch)
	}
	if err := <-waiting; err != nil {
		t.Fatalf("the waiting call of a, once the others ended: %v", err)
	}
}
