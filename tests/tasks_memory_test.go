package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
	"github.com/wasmcp/wasmcp/protocol"
)

// heapInUse is the Go heap in use after a full collection, with freed
// memory returned to the OS.
func heapInUse() uint64 {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestTaskCancelReleasesMemory runs a task's guest in process (the host and
// protocol packages, as wasmcp serve wires them): once the guest holding
// 32 MiB is cancelled, its instance is closed and its memory is garbage.
// (It holds its memory asleep, not spinning: measuring the heap stops the
// world, which a goroutine running a guest's loop does not join.)
func TestTaskCancelReleasesMemory(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join(taskTools(t), "taskguest.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &e2e.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	engine, err := host.NewEngine(host.Config{CacheDir: compileCache, Limits: host.Limits{MemoryBytes: 512 << 20}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close(ctx)
	mod, err := engine.Load(ctx, "taskguest", wasm, host.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.NewServer(protocol.Options{Logger: log})
	// Tasks end (their guests stopped) before the engine closes.
	defer srv.Tasks().Close(ctx, 10*time.Second)
	cat, _ := protocol.NewCatalog([]protocol.Module{mod}, log)
	srv.SetCatalog(cat)
	sess := protocol.NewSession()
	progressed := make(chan struct{}, 1)
	defer srv.AddListener(&protocol.Listener{Session: sess, Send: func(msg []byte) {
		if bytes.Contains(msg, []byte(`"notifications/progress"`)) {
			select {
			case progressed <- struct{}{}:
			default:
			}
		}
	}})()
	call := func(line string) map[string]any {
		msg, _, perr := protocol.Decode([]byte(line))
		if perr != nil {
			t.Fatal(perr)
		}
		resp := srv.Handle(ctx, sess, msg, nil, protocol.Hint{})
		var out map[string]any
		if err := json.Unmarshal(resp.Body, &out); err != nil {
			t.Fatalf("%s: %v", resp.Body, err)
		}
		return out
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)

	base := heapInUse()
	created := resultMap(t, call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold","arguments":{"mib":32},"task":{},"_meta":{"progressToken":1}}}`))
	id := created["task"].(map[string]any)["taskId"].(string)
	select {
	case <-progressed:
	case <-time.After(60 * time.Second):
		t.Fatalf("the guest never reported its allocation; log:\n%s", logs.String())
	}
	busy := heapInUse()
	t.Logf("Go heap in use: %d MiB before, %d MiB with the guest", base>>20, busy>>20)
	if busy < base+32<<20 {
		t.Fatalf("the guest's 32 MiB do not show in the heap (%d → %d MiB)", base>>20, busy>>20)
	}
	resultMap(t, call(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"`+id+`"}}`))
	waitFor(t, 10*time.Second, "the guest to stop", func() bool {
		return strings.Contains(logs.String(), `msg="task guest stopped" task=`+id)
	})
	after := heapInUse()
	t.Logf("Go heap in use after the cancel: %d MiB", after>>20)
	if after > busy-28<<20 {
		t.Fatalf("the cancelled guest's memory was not released: %d MiB in use, %d MiB with the guest", after>>20, busy>>20)
	}
}
