package host

import (
	"context"
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

func TestMemoryBudgetAdmitsWhatFits(t *testing.T) {
	l := Limits{MemoryBytes: 32 << 20, TableElements: 10_000, Timeout: 10 * time.Second}
	cost := instanceCost(l.WithDefaults(DefaultLimits()), nil) + 100*globalBytes
	e, err := NewEngine(Config{CacheDir: testCache, Limits: l, Logger: quietLogger, MemoryBudget: 2*cost + cost/2, BudgetWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	m := loadProbe(t, e, Policy{})

	// Two sleepers fit; a third call waits 200ms, then is busy.
	var wg sync.WaitGroup
	started := make(chan struct{}, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started <- struct{}{}
			if _, err := callTool(t, m, nil, "sleep", `{"n":1500}`); err != nil {
				t.Errorf("sleeper: %v", err)
			}
		}()
	}
	<-started
	<-started
	// Wait until both hold their share (they acquire right after starting).
	for deadline := time.Now().Add(5 * time.Second); e.mem.sem.TryAcquire(cost); {
		e.mem.release(cost)
		if time.Now().After(deadline) {
			t.Fatal("the sleepers never took their budget")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, err = callTool(t, m, nil, "sleep", `{"n":1}`)
	if !IsKind(err, KindLimit) || !strings.Contains(err.Error(), "busy: the server's memory budget of") {
		t.Fatalf("got %v, want busy", err)
	}
	wg.Wait()
	if got, err := callTool(t, m, nil, "sleep", `{"n":1}`); err != nil || got != "slept" {
		t.Fatalf("after the sleepers: %q, %v", got, err)
	}

	// A module whose one instance exceeds the whole budget is refused at load.
	_, err = e.Load(context.Background(), "huge", probeWasm, Policy{Limits: Limits{MemoryBytes: 1 << 30}})
	if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), "more than the server's whole memory budget") {
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
	if grew > stackBytes {
		t.Errorf("the heap grew %d bytes, more than the %d charged for a call's stack", grew, stackBytes)
	}
	if c := instanceCost(DefaultLimits(), nil); c < stackBytes+256<<20 {
		t.Errorf("instanceCost %d does not count the stack", c)
	}
}
