package host

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// spinModule is a hand-assembled guest whose _start spins forever in a
// loop that calls nothing, described by its custom section.
func spinModule() []byte {
	sec := func(id byte, body ...byte) []byte {
		return append(append([]byte{id}, appendU32(nil, uint32(len(body)))...), body...)
	}
	desc := `{"abiVersion":1,"name":"spin","version":"1","tools":[{"name":"spin","inputSchema":{"type":"object"}}]}`
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, sec(1, 1, 0x60, 0, 0)...) // type: () -> ()
	m = append(m, sec(3, 1, 0)...)          // function 0: type 0
	m = append(m, sec(5, 1, 0, 1)...)       // memory: min 1
	exports := []byte{2}
	exports = append(appendName(exports, "_start"), 0x00, 0)
	exports = append(appendName(exports, "memory"), 0x02, 0)
	m = append(m, sec(7, exports...)...)
	body := []byte{0, 0x03, 0x40, 0x0C, 0, 0x0B, 0x0B} // no locals; loop; br 0; end; end
	code := append([]byte{1}, appendU32(nil, uint32(len(body)))...)
	m = append(m, sec(10, append(code, body...)...)...)
	custom := appendName(nil, "wasmcp.describe")
	m = append(m, sec(0, append(custom, desc...)...)...)
	return m
}

func TestInstrumentedLoopStopsAtDeadline(t *testing.T) {
	e := instrumentingEngine(t, Limits{Timeout: 300 * time.Millisecond})
	m, err := e.Load(context.Background(), "spin", spinModule(), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if !m.instrumented() {
		t.Fatal("the spin module was not instrumented")
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), "tools/call", []byte(`{"name":"spin"}`), nil)
		done <- err
	}()
	// Collections while the guest spins: its loop must let the Go runtime
	// stop the world (or the whole process would hang).
	stopGC := make(chan struct{})
	defer close(stopGC)
	go func() {
		for {
			select {
			case <-stopGC:
				return
			default:
				runtime.GC()
				time.Sleep(time.Millisecond)
			}
		}
	}()
	select {
	case err := <-done:
		if !IsKind(err, KindLimit) {
			t.Fatalf("got %v, want the deadline error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a spinning guest outlived its 300ms deadline by 20s")
	}
}

// A module the rewriter leaves alone still loads, on a runtime whose
// instances wazero closes at the deadline.
func TestUninstrumentableModuleFallsBack(t *testing.T) {
	// (The rewriter's own refusals are tested in internal/wasmrewrite.)
	// The spin module with one more export, of its function under the
	// interrupt global's name: the rewriter refuses it.
	spin := spinModule()
	i := bytes.Index(spin, []byte("\x07\x13\x02\x06_start"))
	if i < 0 {
		t.Fatal("export section not found")
	}
	exports := []byte{3}
	exports = append(appendName(exports, "_start"), 0x00, 0)
	exports = append(appendName(exports, "memory"), 0x02, 0)
	exports = append(appendName(exports, interruptExport), 0x00, 0)
	clash := append(append([]byte{}, spin[:i]...), 7, byte(len(exports)))
	clash = append(append(clash, exports...), spin[i+2+0x13:]...)
	e := instrumentingEngine(t, Limits{Timeout: 300 * time.Millisecond})
	m, err := e.Load(context.Background(), "clash", clash, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if m.instrumented() {
		t.Fatal("instrumented a module that exports the interrupt name")
	}
	if _, err := m.Call(context.Background(), "tools/call", []byte(`{"name":"spin"}`), nil); !IsKind(err, KindLimit) {
		t.Fatalf("got %v, want the deadline error", err)
	}
	// A module with nothing but a memory is instrumented (the rewrite
	// needs a memory for its yield).
	r, code, interrupt, err := e.compile(context.Background(), "x", 16, false, []byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x00\x01"), false, false)
	if err != nil || r == nil || code == nil || !interrupt {
		t.Fatalf("the memory-only module: %v %v %v", r, interrupt, err)
	}
}

func instrumentingEngine(t *testing.T, l Limits) *Engine {
	t.Helper()
	e, err := NewEngine(Config{CacheDir: testCache, Limits: l, Logger: quietLogger, InstrumentLoops: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// Without InstrumentLoops (the default) modules are compiled as they are.
func TestInstrumentationIsOffByDefault(t *testing.T) {
	m, err := newEngine(t, Limits{Timeout: 300 * time.Millisecond}).Load(context.Background(), "spin", spinModule(), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if m.instrumented() {
		t.Fatal("instrumented without InstrumentLoops")
	}
	if _, err := m.Call(context.Background(), "tools/call", []byte(`{"name":"spin"}`), nil); !IsKind(err, KindLimit) {
		t.Fatalf("got %v, want the deadline error", err)
	}
}

func appendU32(b []byte, v uint32) []byte { return wasmrewrite.AppendU32(b, v) }

func appendName(b []byte, s string) []byte { return wasmrewrite.AppendName(b, s) }

// spinStartModule is spinModule with its loop in the start section and a
// table of entries filled by an active segment, padded past
// entries*ElementsInCodeBytes: from ElementsInCodeMin entries the host
// moves the fill into an added start function that calls the spinning one.
func spinStartModule(entries int) []byte {
	sec := func(id byte, body ...byte) []byte {
		return append(append([]byte{id}, appendU32(nil, uint32(len(body)))...), body...)
	}

	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, sec(1, 1, 0x60, 0, 0)...)                                                     // type: () -> ()
	m = append(m, sec(3, 2, 0, 0)...)                                                           // function 0 spins, 1 is _start
	m = append(m, sec(4, append([]byte{1, 0x70, 0}, appendU32(nil, uint32(entries))...)...)...) // funcref table, min entries
	m = append(m, sec(5, 1, 0, 1)...)
	exports := []byte{2}
	exports = append(appendName(exports, "_start"), 0x00, 1)
	exports = append(appendName(exports, "memory"), 0x02, 0)
	m = append(m, sec(7, exports...)...)
	m = append(m, sec(8, 0)...) // start: function 0
	elem := append([]byte{1, 0, 0x41, 0, 0x0B}, appendU32(nil, uint32(entries))...)
	for range entries {
		elem = append(elem, 1)
	}
	m = append(m, sec(9, elem...)...)
	spin := []byte{0, 0x03, 0x40, 0x0C, 0, 0x0B, 0x0B} // loop; br 0; end; end
	nop := []byte{0, 0x0B}
	code := append([]byte{2, byte(len(spin))}, spin...)
	code = append(append(code, byte(len(nop))), nop...)
	m = append(m, sec(10, code...)...)
	desc := `{"abiVersion":1,"name":"spin","version":"1","tools":[{"name":"spin","inputSchema":{"type":"object"}}]}`
	m = append(m, sec(0, append(appendName(nil, "wasmcp.describe"), desc...)...)...)
	return append(m, sec(0, append(appendName(nil, "pad"), make([]byte, entries*wasmrewrite.ElementsInCodeBytes)...)...)...)
}

// A start function that spins stops at the deadline, instrumented or not,
// with the table fill the host moves into code (300 entries) or not (10).
// The stop flag can be set only once instantiation returned: a start
// section that spun inside it ran on forever (Instrument now exports it).
func TestSpinningStartFunctionStopsAtDeadline(t *testing.T) {
	if _, err := wasmrewrite.ElementsInCode(spinStartModule(300), wasmrewrite.ElementsInCodeMin); err != nil {
		t.Fatalf("the table fill is not moved into code: %v", err)
	}
	for _, entries := range []int{10, 300} {
		for _, instrument := range []bool{false, true} {
			e := newEngine(t, Limits{Timeout: 300 * time.Millisecond})
			if instrument {
				e = instrumentingEngine(t, Limits{Timeout: 300 * time.Millisecond})
			}
			m, err := e.Load(context.Background(), "spin", spinStartModule(entries), Policy{})
			if err != nil {
				t.Fatal(err)
			}
			if m.instrumented() != instrument {
				t.Fatalf("instrumented %v, want %v", m.instrumented(), instrument)
			}
			done := make(chan error, 1)
			go func() {
				_, err := m.Call(context.Background(), "tools/call", []byte(`{"name":"spin"}`), nil)
				done <- err
			}()
			select {
			case err := <-done:
				if !IsKind(err, KindLimit) {
					t.Fatalf("entries %d, instrumented %v: got %v, want the deadline error", entries, instrument, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("entries %d, instrumented %v: a spinning start function outlived its 300ms deadline by 20s", entries, instrument)
			}
		}
	}
}
