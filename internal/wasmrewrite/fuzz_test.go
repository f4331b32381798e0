package wasmrewrite

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/tetratelabs/wazero"
)

// FuzzInstrument checks Check and Instrument against wazero's validation,
// with the runtime configuration the host compiles with. Only modules
// Check passes reach wazero, as in the host (wazero's decoder allocates
// what a module declares: a module claiming 2³¹ tables in five bytes makes
// it allocate tens of gigabytes). Then: a module wazero accepts
// stays acceptable once instrumented, and a module wazero refuses is
// either refused by Instrument or still refused once instrumented (the
// host only instruments validated modules, but the rewrite must never turn
// an invalid module into a valid one); and a module wazero accepts stays
// acceptable once ElementsInCode moved its elements into code. The seed corpus is
// testdata/fuzz/FuzzInstrument (the hostile battery's WAT guests) and the
// modules added below.
func FuzzInstrument(f *testing.F) {
	f.Add(spinModule())
	f.Add(spinModuleExporting(InterruptExport))
	f.Add(globalsModule())
	f.Add(tableModule{funcs: 3, tables: []tableType{{0x70, 3}, {0x70, 2}}, start: true,
		elems: [][]byte{activeFuncs(0, 2, 1, 0), activeTableExprs(1, i32Expr(0), 1, -1)}}.encode())
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	f.Cleanup(func() { r.Close(ctx) })
	caps := DefaultCaps()
	f.Fuzz(func(t *testing.T, wasm []byte) {
		if _, err := Check(wasm, caps); err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrOverCap) {
				t.Fatalf("Check's error %v wraps neither ErrUnsupported nor ErrOverCap", err)
			}
			return
		}
		orig, oerr := r.CompileModule(ctx, wasm)
		if oerr == nil {
			orig.Close(ctx)
			// ElementsInCode is given validated modules only (it comes
			// before Instrument in the host); what it returns is valid.
			moved, err := elementsInCode(wasm, 0, math.MaxInt)
			switch {
			case err != nil && !errors.Is(err, ErrUnsupported):
				t.Fatalf("ElementsInCode's error %v does not wrap ErrUnsupported", err)
			case err == nil:
				code, cerr := r.CompileModule(ctx, moved)
				if cerr != nil {
					t.Fatalf("a valid module is invalid once its elements are in code: %v", cerr)
				}
				code.Close(ctx)
			}
		}
		out, err := Instrument(wasm)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v does not wrap ErrUnsupported", err)
			}
			return
		}
		code, cerr := r.CompileModule(ctx, out)
		if cerr == nil {
			defer code.Close(ctx)
		}
		switch {
		case oerr == nil && cerr != nil:
			t.Fatalf("a valid module is invalid once instrumented: %v", cerr)
		case oerr != nil && cerr == nil:
			t.Fatalf("an invalid module (%v) is valid once instrumented", oerr)
		case cerr == nil:
			if _, ok := code.ExportedFunctions()[InterruptExport]; ok {
				t.Fatal("the interrupt export is a function")
			}
		}
	})
}

// globalsModule imports a global, defines one, reads both in a loop, and
// has a table and a data segment: the sections around the ones Instrument
// changes.
func globalsModule() []byte {
	sec := func(id byte, body ...byte) []byte {
		return append(append([]byte{id}, AppendU32(nil, uint32(len(body)))...), body...)
	}
	m := []byte(Header)
	m = append(m, sec(SecType, 1, 0x60, 0, 1, 0x7F)...) // () -> i32
	imp := AppendName(AppendName([]byte{1}, "env"), "g")
	m = append(m, sec(SecImport, append(imp, ImportGlobal, 0x7F, 0)...)...)
	m = append(m, sec(SecFunction, 1, 0)...)
	m = append(m, sec(SecTable, 1, 0x70, 1, 1, 4)...)           // funcref, min 1 max 4
	m = append(m, sec(SecMemory, 1, 0, 1)...)                   // min 1
	m = append(m, sec(SecGlobal, 1, 0x7F, 1, 0x41, 7, 0x0B)...) // mut i32 = 7
	m = append(m, sec(SecExport, append(AppendName([]byte{1}, "f"), 0x00, 0)...)...)
	m = append(m, sec(SecElement, 1, 0, 0x41, 0, 0x0B, 1, 0)...) // table 0 at 0: f
	// loop (result i32): global.get 0; global.get 1; i32.add; end
	body := []byte{0, 0x03, 0x7F, 0x23, 0, 0x23, 1, 0x6A, 0x0B, 0x0B}
	m = append(m, sec(SecCode, append(append([]byte{1}, byte(len(body))), body...)...)...)
	m = append(m, sec(SecData, 1, 0, 0x41, 0, 0x0B, 2, 'h', 'i')...)
	return m
}

// The hand-made seeds are valid modules, so the fuzzer starts from the
// interesting side of validation.
func TestSeedsAreValid(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	for i, m := range [][]byte{spinModule(), globalsModule()} {
		if _, err := r.CompileModule(ctx, m); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}
