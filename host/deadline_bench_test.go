package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// BenchmarkDeadlineChecks measures what stopping a guest at its deadline
// costs: one tool call in a fresh instance — instantiate, run _start, which
// reads the request and writes the answer — with wazero's
// WithCloseOnContextDone (the engine's default), with the host's own loop
// instrumentation (Config.InstrumentLoops), and with neither, for the
// example tools (Go, and the C word counter on a 64 KiB text) and for a
// call-heavy Go guest. docs/design/deadlines.md records the figures
// and the decision.
//
//	go test ./host -run '^$' -bench DeadlineChecks -benchtime 20x -count 8
//
// The calls run outside Module.Call with the same module configuration, so
// the variants differ in the checks alone. Besides wall time each reports
// cpu-ns/op, the CPU time of the benchmark's thread per call (Linux), which
// load from other processes does not inflate.
func BenchmarkDeadlineChecks(b *testing.B) {
	guests := benchGuests(b)
	calls := []struct{ name, guest, tool, args string }{
		{"textstats", "textstats", "text_stats", `{"text":"the quick brown fox jumps over the lazy dog and the dog sleeps","top":3}`},
		{"jsonquery", "jsonquery", "json_query", `{"json":"{\"store\":{\"books\":[{\"title\":\"a\"},{\"title\":\"b\"}]}}","path":"store.books[*].title"}`},
		{"codec", "codec", "hash", `{"algorithm":"sha256","text":"hello"}`},
		{"wordcount-c", "wordcount", "word_count", `{"text":"` + strings.Repeat("the quick brown fox jumps over the lazy dog\\n", 1500) + `"}`},
		{"fib27", "callheavy", "fib", `{"n":27}`},
		{"spin1e7", "callheavy", "spin", `{"n":10000000}`},
	}
	// wazero: WithCloseOnContextDone, the engine's default. instrumented:
	// the host's loop checks (Config.InstrumentLoops, wasmrewrite.Instrument).
	// none: no way to stop a loop at all — the floor, not an option.
	for _, variant := range []string{"wazero", "instrumented", "none"} {
		b.Run("checks="+variant, func(b *testing.B) {
			ctx := context.Background()
			cc, err := wazero.NewCompilationCacheWithDir(filepath.Join(testCache, "wazero"))
			if err != nil {
				b.Fatal(err)
			}
			r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
				WithCompilationCache(cc).WithCloseOnContextDone(variant == "wazero").WithMemoryLimitPages(4096))
			defer r.Close(ctx)
			wasi_snapshot_preview1.MustInstantiate(ctx, r)
			for _, c := range calls {
				wasm := guests[c.guest]
				if variant == "instrumented" {
					if wasm, err = wasmrewrite.Instrument(wasm); err != nil {
						b.Fatalf("%s: %v", c.guest, err)
					}
				}
				code, err := r.CompileModule(ctx, wasm)
				if err != nil {
					b.Fatal(err)
				}
				req := requestLine([]byte("1"), "tools/call", []byte(`{"name":"`+c.tool+`","arguments":`+c.args+`}`))
				b.Run(c.name, func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					var out bytes.Buffer
					cpu0 := threadCPU()
					for b.Loop() {
						out.Reset()
						if err := runOnce(ctx, r, code, req, &out); err != nil {
							b.Fatal(err)
						}
						if !bytes.Contains(out.Bytes(), []byte(`"result"`)) {
							b.Fatalf("no result: %s", out.Bytes())
						}
					}
					if cpu := threadCPU() - cpu0; cpu > 0 {
						b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
					}
				})
			}
		})
	}
}

// runOnce is one call in a fresh instance, as Module.Call makes it.
func runOnce(ctx context.Context, r wazero.Runtime, code wazero.CompiledModule, req []byte, out *bytes.Buffer) error {
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("bench").WithStartFunctions().
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().WithRandSource(rand.Reader).
		WithStdin(bytes.NewReader(req)).WithStdout(out)
	mod, err := r.InstantiateModule(ctx, code, cfg)
	if err != nil {
		return err
	}
	defer mod.Close(ctx)
	_, err = mod.ExportedFunction("_start").Call(ctx)
	var exit *sys.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 0 {
		return nil
	}
	return err
}

var (
	benchOnce   sync.Once
	benchWasm   map[string][]byte
	benchBuildE error
)

// benchGuests builds the example tools and the call-heavy guest once.
func benchGuests(b *testing.B) map[string][]byte {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deadline-bench")
		if err != nil {
			benchBuildE = err
			return
		}
		defer os.RemoveAll(dir)
		benchWasm = map[string][]byte{}
		// The C example is committed; its build needs clang and wasi-libc.
		if benchWasm["wordcount"], err = os.ReadFile("../examples/c/wordcount/wordcount.wasm"); err != nil {
			benchBuildE = err
			return
		}
		for name, src := range map[string]string{
			"textstats": "../examples/wasm/textstats",
			"jsonquery": "../examples/wasm/jsonquery",
			"codec":     "../examples/wasm/codec",
			"callheavy": "testdata/guests/callheavy",
		} {
			out := filepath.Join(dir, name+".wasm")
			// The command shape (the Go runtime starts in every
			// instance), which the figures of docs/design/deadlines.md
			// were measured with; the examples build as reactors by
			// default.
			if err := guestbuild.Build(context.Background(), src, out, "-tags=command"); err != nil {
				benchBuildE = err
				return
			}
			if benchWasm[name], err = os.ReadFile(out); err != nil {
				benchBuildE = err
				return
			}
		}
	})
	if benchBuildE != nil {
		b.Fatal(benchBuildE)
	}
	return benchWasm
}
