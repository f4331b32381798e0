package hostile

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/registry"
)

// sink is a request's stream that keeps nothing: it counts what the
// server sends and never answers a request.
type sink struct{ n atomic.Int64 }

func (s *sink) Send(ctx context.Context, msg []byte) error {
	s.n.Add(1)
	return nil
}

// TestNoLeaksAfter1000HostileCalls runs a thousand hostile calls — the
// battery's tools in turn, eight at a time — and checks that the
// host's goroutines and live heap come back to what they were before.
//
// It runs the host in this process (protocol.Server, host.Engine and the
// registry, as `wasmcp serve` wires them) rather than asking a wasmcp
// process: runtime.NumGoroutine and runtime.ReadMemStats are exact here,
// and the product needs no debug endpoint. The transports take no part in
// a guest's life beyond one request; the battery runs them end to end.
func TestNoLeaksAfter1000HostileCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("a thousand calls; skipped with -short")
	}
	t.Setenv(hostEnv, "from-host")
	dir := t.TempDir()
	// Deadlines of 200 ms keep the loops and sleepers cheap.
	if err := writeTools(filepath.Join(dir, "tools"), filepath.Join(dir, "outside"), "200ms"); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine, err := host.NewEngine(host.Config{CacheDir: cacheDir, Logger: quiet,
		Limits: host.Limits{MemoryBytes: 64 << 20, Timeout: 10 * time.Second, OutputBytes: 4 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close(context.Background())
	srv := protocol.NewServer(protocol.Options{Logger: quiet})
	ctx := context.Background()
	if err := registry.New(filepath.Join(dir, "tools"), engine, srv, quiet).Load(ctx); err != nil {
		t.Fatal(err)
	}
	sess := protocol.NewSession()
	defer sess.Close()
	stream := &sink{}
	handle := func(line string) protocol.Response {
		msg, _, perr := protocol.Decode([]byte(line))
		if perr != nil {
			t.Fatalf("%s: %s", line, perr.Message)
		}
		return srv.Handle(ctx, sess, msg, stream, protocol.Hint{})
	}
	handle(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"leak","version":"1"}}}`)
	handle(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The thousand calls: every fast tool in turn, and in the first eight
	// rounds the slow ones too (each deadline costs 200 ms, and unbounded
	// recursion grows a native stack of hundreds of MiB before it traps).
	fast := []string{"stdout_flood", "endless_line", "malformed", "wrong_id", "two_responses", "exit_mid",
		"unreachable", "closed_stdin", "bad_fds", "close_stdout", "request_flood", "env"}
	slow := []string{"loop", "recurse", "grow", "silent", "notify_flood", "alloc_oom", "sleep_forever", "escape"}
	const total, workers = 1000, 8
	var schedule []string
	for round := 0; len(schedule) < total; round++ {
		schedule = append(schedule, fast...)
		if round < 8 {
			schedule = append(schedule, slow...)
		}
	}
	schedule = schedule[:total]
	var nextID atomic.Int64
	call := func(tool string) {
		id := nextID.Add(1)
		r := handle(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool))
		if len(r.Body) == 0 || (!strings.Contains(string(r.Body), `"isError":true`) && tool != "two_responses" && tool != "escape" && tool != "env") {
			t.Errorf("%s: want a tool error, got %s", tool, r.Body)
		}
	}
	// Warm up: the first call of each tool sets up runtimes and caches
	// that live as long as the engine.
	for _, tool := range append(fast, slow...) {
		call(tool)
	}
	baseG, baseHeap := settle()
	t.Logf("baseline: %d goroutines, %s live heap", baseG, mib(baseHeap))

	var wg sync.WaitGroup
	var n atomic.Int64
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := n.Add(1) - 1
				if i >= total {
					return
				}
				call(schedule[i])
			}
		}()
	}
	wg.Wait()
	t.Logf("%d hostile calls in %s; the server sent %d messages to the client", total, time.Since(start).Round(time.Millisecond), stream.n.Load())

	// Goroutines may take a moment to wind down; the heap is measured after
	// a full collection. Slack: 4 MiB of heap (a leak of 4 KiB per call
	// would show), no goroutine.
	const slack = 4 << 20
	var g int
	var heap uint64
	deadline := time.Now().Add(15 * time.Second)
	for {
		g, heap = settle()
		if g <= baseG && heap <= baseHeap+slack {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("after %d hostile calls: %d goroutines (baseline %d), %s live heap (baseline %s, slack %s)\n%s",
				total, g, baseG, mib(heap), mib(baseHeap), mib(slack), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("after: %d goroutines, %s live heap", g, mib(heap))
}

// settle collects garbage and returns the goroutine count and live heap.
func settle() (int, uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
