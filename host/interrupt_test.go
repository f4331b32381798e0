package host

import (
	"context"
	"runtime"
	"testing"
	"time"
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
	if !m.interrupt {
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
	spin := spinModule()
	// Rename the "memory" export to the interrupt global's name: the
	// rewriter refuses a module that already exports that name.
	renamed := []byte(string(spin))
	i := indexOf(renamed, "memory")
	clash := append(append(append([]byte{}, renamed[:i-1]...), appendName(nil, interruptExport)...), renamed[i+len("memory"):]...)
	if _, err := instrument(clash); err == nil {
		t.Fatal("instrumented a module that exports the interrupt name")
	}
	// An opcode outside wazero's proposals (0x06, try) is refused too.
	if _, err := instrumentBody(nil, []byte{0, 0x06, 0x40, 0x0B, 0x0B}, []byte{0x01}, 0); err == nil {
		t.Fatal("instrumented an unknown opcode")
	}
	// Loading a module that cannot be instrumented: spin with a section
	// length the rewriter rejects is not loadable at all, so use the
	// compile fallback directly.
	e := instrumentingEngine(t, Limits{Timeout: 300 * time.Millisecond})
	r, code, interrupt, err := e.compile(context.Background(), "x", 16, []byte("\x00asm\x01\x00\x00\x00"))
	if err != nil || r == nil || code == nil || !interrupt {
		t.Fatalf("the empty module: %v %v %v", r, interrupt, err)
	}
}

func indexOf(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

// Every loop gets the check; everything else is kept byte for byte.
func TestInstrumentKeepsTheRest(t *testing.T) {
	spin := spinModule()
	out, err := instrument(spin)
	if err != nil {
		t.Fatal(err)
	}
	// The loop body: loop 0x40, then global.get 0, if, unreachable, end.
	if indexOf(out, "\x03\x40"+string(loopCheck(0))+"\x0c\x00\x0b\x0b") < 0 {
		t.Fatalf("no check after the loop header: % x", out)
	}
	if indexOf(out, interruptExport) < 0 || indexOf(out, "wasmcp.describe") < 0 {
		t.Fatal("export or custom section missing")
	}
	// Idempotence guard: instrumenting twice is refused (the export exists).
	if _, err := instrument(out); err == nil {
		t.Fatal("instrumented an instrumented module")
	}
	for _, bad := range [][]byte{nil, []byte("\x00asm\x02\x00\x00\x00"), spin[:len(spin)-3], append(append([]byte{}, spin...), 10, 5, 1)} {
		if _, err := instrument(bad); err == nil {
			t.Errorf("instrumented a broken module (% x)", bad[:min(len(bad), 12)])
		}
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
	if m.interrupt {
		t.Fatal("instrumented without InstrumentLoops")
	}
	if _, err := m.Call(context.Background(), "tools/call", []byte(`{"name":"spin"}`), nil); !IsKind(err, KindLimit) {
		t.Fatalf("got %v, want the deadline error", err)
	}
}
