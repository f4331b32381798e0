package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
