package registry

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
)

// TestSpinEndsWhenTheCallEndsDuringItsStart: a script's call whose context
// ends while its instance is being given its snapshot's state (applyState
// sets every mutable global, the interrupt flag among them) still stops:
// a handler that spins must not outlive its call.
func TestSpinEndsWhenTheCallEndsDuringItsStart(t *testing.T) {
	useRunner(t)
	dir := t.TempDir()
	e, err := host.NewEngine(host.Config{CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), InstrumentLoops: true,
		SnapshotTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	src := `const { McpServer } = require("wasmcp");
const server = new McpServer({ name: "spin", version: "1.0.0" });
server.registerTool("spin", {}, () => { for (;;) {} });
`
	script := filepath.Join(dir, "spin.js")
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadFile(context.Background(), e, script)
	if err != nil {
		t.Fatal(err)
	}
	if used, why := m.Snapshot(); !used || !m.Policy().SharedCode {
		t.Fatalf("no shared snapshot: %s", why)
	}
	for i := 0; i < 200; i++ {
		d := time.Duration(i%100) * 20 * time.Microsecond
		ctx, cancel := context.WithTimeout(context.Background(), d)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = m.Call(ctx, abi.MethodToolsCall, []byte(`{"name":"spin","arguments":{}}`), nil)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("call %d (its context ended after %s) still spins 20 s later", i, d)
		}
		cancel()
	}
}
