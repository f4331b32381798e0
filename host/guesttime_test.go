package host

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// spinningCommand is a command whose _start spins for ever: without a
// description of its own, its describe run never answers.
func spinningCommand() []byte {
	w := []byte(wasmrewrite.Header)
	w = append(w, wasmSection(1, 1, 0x60, 0, 0)...)
	w = append(w, wasmSection(3, 1, 0)...)
	w = append(w, wasmSection(5, 1, 0, 1)...)
	exp := []byte{2}
	exp = append(appendName(exp, "memory"), 0x02, 0)
	exp = append(appendName(exp, "_start"), 0x00, 0)
	w = append(w, wasmSection(7, exp...)...)
	body := []byte{0, 0x03, 0x40, 0x0C, 0x00, 0x0B, 0x0B} // loop br 0 end
	return append(w, wasmSection(10, append([]byte{1, byte(len(body))}, body...)...)...)
}

// TestLoadRunsJudgeTheGuestsTime: a run at load that spins is cut by its
// deadline in the guest's own time, and refused for good, the error naming
// the flag; one the wall-clock ceiling cuts first is refused for now only
// (Transient): the machine, not the guest, was slow.
func TestLoadRunsJudgeTheGuestsTime(t *testing.T) {
	spin := tinyReactor(0x03, 0x40, 0x0C, 0x00, 0x0B, 0x0B) // loop br 0 end
	cases := []struct {
		name      string
		cfg       Config
		wasm      []byte
		snapshot  bool
		want      string
		transient bool
	}{
		{"describe over its deadline", Config{DescribeTimeout: 300 * time.Millisecond}, spinningCommand(), false,
			"deadline of 300ms exceeded (--describe-timeout)", false},
		{"describe at the ceiling", Config{DescribeTimeout: time.Minute, LoadCeiling: 400 * time.Millisecond}, spinningCommand(), false,
			"the machine is busy; it is tried again later", true},
		{"start-up over its deadline", Config{SnapshotTimeout: 300 * time.Millisecond}, spin, true,
			"start-up took longer than the deadline of 300ms (--snapshot-timeout)", false},
		{"start-up at the ceiling", Config{SnapshotTimeout: time.Minute, LoadCeiling: 400 * time.Millisecond}, spin, true,
			"under its deadline of 1m0s (--snapshot-timeout): the machine is busy", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.CacheDir, c.cfg.Logger = t.TempDir(), quietLogger
			e, err := NewEngine(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close(context.Background()) })
			start := time.Now()
			m, err := e.Load(context.Background(), "m", c.wasm, Policy{NoSnapshot: !c.snapshot})
			took := time.Since(start)
			var msg string
			if c.snapshot {
				if err != nil {
					t.Fatal(err)
				}
				var used bool
				used, msg = m.Snapshot()
				if used {
					t.Fatal("a start-up cut short became a snapshot")
				}
				if got := m.snapRetry.Load(); got != c.transient {
					t.Fatalf("start-up taken again later: %v, want %v", got, c.transient)
				}
			} else {
				if err == nil {
					t.Fatal("a describe run that never answers loaded")
				}
				msg = err.Error()
				if Transient(err) != c.transient {
					t.Fatalf("Transient(%q) = %v, want %v", msg, !c.transient, c.transient)
				}
			}
			if !strings.Contains(msg, c.want) {
				t.Fatalf("reason %q, want it to say %q", msg, c.want)
			}
			if runtime.GOOS == "linux" && !c.transient && !strings.Contains(msg, "of CPU and waits") {
				t.Fatalf("reason %q does not say what the guest used", msg)
			}
			if took > 30*time.Second {
				t.Fatalf("the run took %s", took)
			}
		})
	}
}

// TestSnapshotTakenAgainAfterABusyMachine: a start-up the wall-clock
// ceiling cut (the machine was busy, the guest under its deadline) leaves
// the module without a snapshot only for now: the start-up is taken again
// in the background, and once it succeeds the module's next compilation
// runs from the snapshot.
func TestSnapshotTakenAgainAfterABusyMachine(t *testing.T) {
	e, err := NewEngine(Config{CacheDir: t.TempDir(), Logger: quietLogger, SnapshotTimeout: 30 * time.Second,
		LoadCeiling: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	e.snapRetry = 100 * time.Millisecond
	wasm := sleepyReactor(int64(time.Second)) // its start-up sleeps 1 s: its own time, under 30 s
	m, err := e.Open(context.Background(), "sleepy", wasm, "", Policy{}, func() ([]byte, error) { return wasm, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Compile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if used, reason := m.Snapshot(); used || !strings.Contains(reason, "the machine is busy") {
		t.Fatalf("used %v, reason %q; want no snapshot for now, for the ceiling", used, reason)
	}
	e.loadCeil.Store(0) // the machine is quiet again: the default ceiling (1 min)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := m.Compile(context.Background()); err != nil {
			t.Fatal(err)
		}
		if used, _ := m.Snapshot(); used {
			return
		}
		if time.Now().After(deadline) {
			_, reason := m.Snapshot()
			t.Fatalf("the start-up was not taken again: %s", reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
