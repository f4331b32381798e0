package registry

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/protocol"
)

// BenchmarkHotReload measures, with a warm compilation cache and the
// default settle window, the time from a completed rename of a module into
// the watched directory to the first successful tools/call of one of its
// tools. Each iteration deletes the module again (untimed). It reports the
// p50 and p99 of the iterations, in ms:
//
//	go test -run '^$' -bench HotReload -benchtime 40x ./registry/
//
// "small" is the hand-written WAT guest (1 KB); "large" is a std-Go guest
// built with the SDK (tests/testdata/reload, ~3.7 MB).
func BenchmarkHotReload(b *testing.B) {
	b.Run("small", func(b *testing.B) {
		benchReload(b, smallV1, "small_hello", "hello from small v1")
	})
	b.Run("large", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "reload.wasm")
		if err := guestbuild.Build(context.Background(), "../tests/testdata/reload", out); err != nil {
			b.Skip("cannot build the std-Go guest: ", err)
		}
		wasm, err := os.ReadFile(out)
		if err != nil {
			b.Fatal(err)
		}
		benchReload(b, wasm, "reload_version", "version v1")
	})
}

func benchReload(b *testing.B, wasm []byte, tool, want string) {
	dir := b.TempDir()
	log := slog.New(slog.DiscardHandler)
	// As wasmcp serve loads modules: instrumented for deadlines.
	engine, err := host.NewEngine(host.Config{CacheDir: cacheDir, Logger: log, InstrumentLoops: true})
	if err != nil {
		b.Fatal(err)
	}
	defer engine.Close(context.Background())
	srv := protocol.NewServer(protocol.Options{Logger: log})
	changed := make(chan struct{}, 16)
	srv.AddListener(&protocol.Listener{Tools: true, Send: func([]byte) { changed <- struct{}{} }})
	reg := New(dir, engine, srv, log)
	defer reg.Close()
	if err := reg.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- reg.Watch(ctx) }()
	defer func() { cancel(); <-done }()

	tmp := filepath.Join(dir, ".module.wasm.tmp")
	path := filepath.Join(dir, "module.wasm")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
	wait := func() {
		select {
		case <-changed:
		case <-time.After(time.Minute):
			b.Fatal("no list_changed")
		}
	}
	cycle := func() time.Duration {
		if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
		wait()
		if got := handle(b, srv, call); !strings.Contains(got, want) {
			b.Fatalf("call = %s", got)
		}
		d := time.Since(start)
		if err := os.Remove(path); err != nil {
			b.Fatal(err)
		}
		wait()
		return d
	}
	cycle() // warms the compilation and description caches

	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		ds = append(ds, cycle())
	}
	b.StopTimer()
	slices.Sort(ds)
	pct := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
