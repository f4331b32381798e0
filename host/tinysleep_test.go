package host

import (
	"context"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// tinySleepReactor's start-up sleeps 1 ns, for ever: each sleep asks for
// almost nothing, and what the host spends waking the guest is wall time.
func tinySleepReactor() []byte {
	w := []byte(wasmrewrite.Header)
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
	snap := []byte{0, 0x41, 24}
	snap = append(wasmrewrite.AppendS64(append(snap, 0x42), 1), 0x37, 0x03, 0x00)
	snap = append(snap, 0x03, 0x40, 0x41, 0, 0x41, 0xC0, 0x00, 0x41, 1, 0x41, 0x80, 0x01, 0x10, 0, 0x1A, 0x0C, 0x00, 0x0B, 0x0B)
	code := append([]byte{2, byte(len(main))}, main...)
	code = append(append(code, byte(len(snap))), snap...)
	w = append(w, wasmSection(10, code...)...)
	return appendCustomSection(w, abi.CustomSection, []byte(`{"abiVersion":1,"name":"tinysleep"}`))
}

// TestTinySleepsCountAsTheGuestsTime: a start-up that sleeps 1 ns for ever
// keeps the host busy waking it; it must be cut by its own deadline (and
// refused for good), not reach the wall-clock ceiling and be retried as if
// the machine were busy.
func TestTinySleepsCountAsTheGuestsTime(t *testing.T) {
	e, err := NewEngine(Config{CacheDir: t.TempDir(), Logger: quietLogger, SnapshotTimeout: time.Second,
		LoadCeiling: 8 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	e.snapRetry = time.Hour
	start := time.Now()
	m, err := e.Load(context.Background(), "tinysleep", tinySleepReactor(), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	used, reason := m.Snapshot()
	t.Logf("took %s: used %v, reason %q, retry %v", time.Since(start), used, reason, m.snapRetry.Load())
	if used || m.snapRetry.Load() {
		t.Fatalf("a start-up sleeping 1 ns for ever is retried as cut by a busy machine: %s", reason)
	}
}
