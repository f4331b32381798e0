package wasmrewrite

import (
	"bytes"
	"strings"
	"testing"
)

// spinModule is a hand-assembled module whose _start spins forever in a
// loop that calls nothing, with a custom section.
func spinModule() []byte { return spinModuleExporting("") }

// spinModuleExporting is spinModule exporting its function under one more
// name too (unless extra is empty).
func spinModuleExporting(extra string) []byte {
	sec := func(id byte, body ...byte) []byte {
		return append(append([]byte{id}, AppendU32(nil, uint32(len(body)))...), body...)
	}
	m := []byte(Header)
	m = append(m, sec(SecType, 1, 0x60, 0, 0)...) // type: () -> ()
	m = append(m, sec(SecFunction, 1, 0)...)      // function 0: type 0
	m = append(m, sec(SecMemory, 1, 0, 1)...)     // memory: min 1
	exports := []byte{2}
	exports = append(AppendName(exports, "_start"), 0x00, 0)
	exports = append(AppendName(exports, "memory"), 0x02, 0)
	if extra != "" {
		exports[0] = 3
		exports = append(AppendName(exports, extra), 0x00, 0)
	}
	m = append(m, sec(SecExport, exports...)...)
	body := []byte{0, 0x03, 0x40, 0x0C, 0, 0x0B, 0x0B} // no locals; loop; br 0; end; end
	code := append([]byte{1}, AppendU32(nil, uint32(len(body)))...)
	m = append(m, sec(SecCode, append(code, body...)...)...)
	m = append(m, sec(SecCustom, append(AppendName(nil, "wasmcp.describe"), "{}"...)...)...)
	return m
}

// Every loop gets the check; everything else is kept byte for byte.
func TestInstrumentKeepsTheRest(t *testing.T) {
	spin := spinModule()
	out, err := Instrument(spin)
	if err != nil {
		t.Fatal(err)
	}
	// The loop body: loop 0x40, then global.get 0, if, unreachable, end.
	if !bytes.Contains(out, []byte("\x03\x40"+string(loopCheck(0))+"\x0c\x00\x0b\x0b")) {
		t.Fatalf("no check after the loop header: % x", out)
	}
	if !bytes.Contains(out, []byte(InterruptExport)) || !bytes.Contains(out, []byte("wasmcp.describe")) {
		t.Fatal("export or custom section missing")
	}
	// Idempotence guard: instrumenting twice is refused (the export exists).
	if _, err := Instrument(out); err == nil {
		t.Fatal("instrumented an instrumented module")
	}
	for _, bad := range [][]byte{nil, []byte("\x00asm\x02\x00\x00\x00"), spin[:len(spin)-3], append(append([]byte{}, spin...), 10, 5, 1)} {
		if _, err := Instrument(bad); err == nil {
			t.Errorf("instrumented a broken module (% x)", bad[:min(len(bad), 12)])
		}
	}
}

func TestInstrumentRefuses(t *testing.T) {
	if _, err := Instrument(spinModuleExporting("other")); err != nil {
		t.Fatalf("the control module: %v", err)
	}
	_, err := Instrument(spinModuleExporting(InterruptExport))
	if err == nil || !strings.Contains(err.Error(), "exports "+InterruptExport) {
		t.Fatalf("instrumented a module that exports the interrupt name (%v)", err)
	}
	_, err = Instrument(spinModuleExporting(StartExport))
	if err == nil || !strings.Contains(err.Error(), "exports "+StartExport) {
		t.Fatalf("instrumented a module that exports the start name (%v)", err)
	}
	// An opcode outside wazero's proposals (0x06, try) is refused too.
	if _, err := instrumentBody(nil, []byte{0, 0x06, 0x40, 0x0B, 0x0B}, []byte{0x01}, 0); err == nil {
		t.Fatal("instrumented an unknown opcode")
	}
	// A body naming a global the module does not have.
	if _, err := instrumentBody(nil, []byte{0, 0x23, 0x00, 0x1A, 0x0B}, []byte{0x01}, 0); err == nil {
		t.Fatal("instrumented a body naming a missing global")
	}
}

// A start section would run inside instantiation, before the stop flag
// can be set: Instrument removes it and exports its function as
// StartExport; a module without one gets no such export.
func TestInstrumentExportsTheStartFunction(t *testing.T) {
	m := tableModule{funcs: 3, tables: []tableType{{0x70, 3}}, start: true, elems: [][]byte{activeFuncs(0, 2, 1, 0)}}
	for _, start := range []bool{false, true} {
		m.start = start
		out, err := Instrument(m.encode())
		if err != nil {
			t.Fatal(err)
		}
		secs, err := Sections(out)
		if err != nil {
			t.Fatal(err)
		}
		var exported int64 = -1
		for _, s := range secs {
			if s.ID == SecStart {
				t.Fatal("the start section is still there")
			}
			if s.ID == SecExport {
				r := &Reader{B: s.Body}
				for n := r.U32(); n > 0 && r.Err == nil; n-- {
					name, kind, idx := r.Name(), r.Byte(), r.U32()
					if name == StartExport && kind == 0x00 {
						exported = int64(idx)
					}
				}
			}
		}
		// The start function is the last one tableModule defines.
		if want := map[bool]int64{false: -1, true: int64(m.funcs + len(m.tables))}[start]; exported != want {
			t.Fatalf("start %v: %s exports function %d, want %d", start, StartExport, exported, want)
		}
	}
}
