package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// The word_count tool exists as a C guest (committed, built with wasi-libc)
// and as a Go guest (built here): the same description, the same work, the
// same answer. These benchmarks compare what one call costs the host with
// each, a fresh instance per call.

const wordCountParams = `{"name":"word_count","arguments":{"text":"the quick brown fox jumps over the lazy dog\nand runs away"},"_meta":{"progressToken":"t"}}`

// builtGuest is a guest built once per test binary.
type builtGuest struct {
	once sync.Once
	wasm []byte
	err  error
}

var goWordCount, goReactorWordCount builtGuest

// get builds the guest with build on first use and returns its bytes.
func (g *builtGuest) get(b testing.TB, build func(ctx context.Context, dir, out string) error) []byte {
	b.Helper()
	g.once.Do(func() {
		out := filepath.Join(b.TempDir(), "wordcount.wasm")
		if g.err = build(context.Background(), filepath.Join("..", "examples", "wasm", "wordcount"), out); g.err == nil {
			g.wasm, g.err = os.ReadFile(out)
		}
	})
	if g.err != nil {
		b.Fatal(g.err)
	}
	return g.wasm
}

// wordCountModule loads the C or the Go word_count guest.
func wordCountModule(b *testing.B, lang string) *Module {
	b.Helper()
	var wasm []byte
	switch lang {
	case "c":
		var err error
		if wasm, err = os.ReadFile(filepath.Join("..", "examples", "c", "wordcount", "wordcount.wasm")); err != nil {
			b.Fatal(err)
		}
	case "go":
		wasm = goWordCountWasm(b)
	case "go-reactor":
		// The same Go code built as a reactor the host runs from a
		// snapshot of its start-up (snapshot.go).
		wasm = goReactorWordCount.get(b, func(ctx context.Context, dir, out string) error {
			return guestbuild.BuildReactor(ctx, dir, out)
		})
	}
	// As wasmcp serve runs it: deadlines by instrumented loops.
	e, err := NewEngine(Config{CacheDir: testCache, Logger: quietLogger, InstrumentLoops: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close(context.Background()) })
	m, err := e.Load(context.Background(), "wordcount", wasm, Policy{})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// goWordCountWasm builds the Go word_count guest (once).
func goWordCountWasm(b testing.TB) []byte {
	return goWordCount.get(b, func(ctx context.Context, dir, out string) error {
		// The command variant: the Go runtime starts in every instance.
		return guestbuild.Build(ctx, dir, out, "-tags=command")
	})
}

func benchWordCount(b *testing.B, lang string, parallel bool) {
	m := wordCountModule(b, lang)
	params := []byte(wordCountParams)
	call := func() {
		r, err := m.Call(context.Background(), abi.MethodToolsCall, params, nil)
		if err != nil || r.Error != nil || len(r.Result) == 0 {
			b.Fatalf("call: %v %v", err, r)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call()
			}
		})
		return
	}
	// cpu-ns/op is the process's CPU time per call (the garbage
	// collector's included): read it rather than ns/op on a busy machine.
	cpu := processCPU()
	for b.Loop() {
		call()
	}
	if cpu > 0 {
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkWordCount is one tools/call of word_count in a fresh instance,
// serially and with GOMAXPROCS goroutines calling at once.
func BenchmarkWordCount(b *testing.B) {
	for _, lang := range []string{"c", "go", "go-reactor"} {
		b.Run(lang, func(b *testing.B) { benchWordCount(b, lang, false) })
		b.Run(lang+"-parallel", func(b *testing.B) { benchWordCount(b, lang, true) })
	}
}

// BenchmarkWordCountInterpreter is BenchmarkWordCount/c and /go-reactor
// on the interpreter tier (tier.go): what a module's first calls cost
// while its compiled code is being built. The compiler tier is held back
// for good, so every call runs on the interpreter.
func BenchmarkWordCountInterpreter(b *testing.B) {
	for _, lang := range []string{"c", "go-reactor"} {
		b.Run(lang, func(b *testing.B) {
			var wasm []byte
			switch lang {
			case "c":
				var err error
				if wasm, err = os.ReadFile(filepath.Join("..", "examples", "c", "wordcount", "wordcount.wasm")); err != nil {
					b.Fatal(err)
				}
			default:
				wasm = goReactorWordCount.get(b, func(ctx context.Context, dir, out string) error {
					return guestbuild.BuildReactor(ctx, dir, out)
				})
			}
			e, err := NewEngine(Config{CacheDir: "-", Logger: quietLogger, InstrumentLoops: true, InterpreterFirst: true})
			if err != nil {
				b.Fatal(err)
			}
			e.beforeBuild = func(_ string, t tier) error {
				if t == tierCompiled {
					return errors.New("held back")
				}
				return nil
			}
			b.Cleanup(func() { e.Close(context.Background()) })
			m, err := e.Load(context.Background(), "wordcount", wasm, Policy{})
			if err != nil {
				b.Fatal(err)
			}
			if m.Tier() != TierInterpreter {
				b.Fatalf("tier %q", m.Tier())
			}
			params := []byte(wordCountParams)
			b.ReportAllocs()
			for b.Loop() {
				r, err := m.Call(context.Background(), abi.MethodToolsCall, params, nil)
				if err != nil || r.Error != nil || len(r.Result) == 0 {
					b.Fatalf("call: %v %v", err, r)
				}
			}
		})
	}
}
