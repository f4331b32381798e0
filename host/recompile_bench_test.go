package host

import (
	"context"
	"testing"
)

// BenchmarkRecompileFromCache is what a call pays for a module whose code
// the code budget closed (--code-memory): its code compiled again with
// the compilation cache warm, for the Go word_count guest (3.6 MiB), as
// `wasmcp serve` compiles it (loops instrumented). "whole" is the
// compilation a call waits for, "whole-validating" the same with the
// compilation of the module as given that only validates it (what every
// compilation did before); the others are parts, one at a time:
// reading the engine's copy of the module, hashing it, our checks and
// rewrites (prepare, Instrument), and wazero's CompileModule of the
// instrumented module from the file cache (it decodes and validates the
// module, reads the cached machine code, checksums it and maps it
// executable) and found in memory (decode and validation only). A CPU
// profile of "whole" splits wazero's part further:
//
//	go test -run '^$' -bench 'RecompileFromCache/whole' -benchtime 20x -cpuprofile /tmp/recompile.prof ./host/
//	go tool pprof -top -cum host.test /tmp/recompile.prof
func BenchmarkRecompileFromCache(b *testing.B) {
	ctx := context.Background()
	src := goWordCountWasm(b)
	e, err := NewEngine(Config{CacheDir: testCache, Logger: quietLogger, InstrumentLoops: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close(context.Background()) })
	// Open as the registry does, with a source to compile again from.
	m, err := e.Open(ctx, "wordcount", src, "", Policy{}, func() ([]byte, error) { return src, nil })
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Compile(ctx); err != nil {
		b.Fatal(err)
	}
	if !m.instrumented() {
		b.Fatal("the Go guest was not instrumented")
	}
	evict := func() {
		if c := m.slot.evict(); c != nil {
			e.code.removed(m)
			_ = c.code.Close(ctx)
		} else {
			b.Fatal("nothing to evict")
		}
	}
	prepared, _, err := prepare(src, m.policy.Limits)
	if err != nil {
		b.Fatal(err)
	}
	iw, err := rewrite(prepared)
	if err != nil {
		b.Fatal(err)
	}
	pages := m.policy.Limits.memoryPages()
	// "whole" skips the compilation of the module as given, validated at
	// the first compilation (Engine.compile); "whole-validating" is the
	// same with that compilation, as before.
	for _, k := range []struct {
		name       string
		revalidate bool
	}{{"whole", false}, {"whole-validating", true}} {
		b.Run(k.name, func(b *testing.B) {
			var cpu int64
			for b.Loop() {
				b.StopTimer()
				evict()
				if k.revalidate {
					m.slot.mu.Lock()
					m.slot.valid = ""
					m.slot.mu.Unlock()
				}
				b.StartTimer()
				cpu0 := processCPU()
				if err := m.Compile(ctx); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU() - cpu0
			}
			// CPU time (all threads) is steadier than wall time on a
			// busy machine.
			if cpu > 0 {
				b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
			}
		})
	}
	b.Run("read-copy", func(b *testing.B) {
		for b.Loop() {
			if _, ok := e.descs.module(m.hash); !ok {
				b.Fatal("no copy of the module in the cache")
			}
		}
	})
	b.Run("sha256", func(b *testing.B) {
		for b.Loop() {
			_ = hexSum(src)
		}
	})
	b.Run("prepare", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := prepare(src, m.policy.Limits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("instrument", func(b *testing.B) {
		for b.Loop() {
			if _, err := rewrite(prepared); err != nil {
				b.Fatal(err)
			}
		}
	})
	// wazero's part: one CompileModule of the instrumented module from
	// the file cache (decode, validate, read, checksum and map the machine
	// code), and the same while a compiled copy is open, which wazero
	// finds in memory (decode and validate only).
	evict()
	r, err := e.runtime(ctx, pages, false, false, false)
	if err != nil {
		b.Fatal(err)
	}
	compile := func(b *testing.B) {
		code, err := r.CompileModule(ctx, iw)
		if err != nil {
			b.Fatal(err)
		}
		_ = code.Close(ctx)
	}
	b.Run("wazero-file-cache", func(b *testing.B) {
		for b.Loop() {
			compile(b)
		}
	})
	b.Run("wazero-decode-validate", func(b *testing.B) {
		held, err := r.CompileModule(ctx, iw)
		if err != nil {
			b.Fatal(err)
		}
		defer held.Close(ctx)
		for b.Loop() {
			compile(b)
		}
	})
}
