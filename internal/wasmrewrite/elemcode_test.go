package wasmrewrite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// tableModule describes a test module: funcs functions of type () -> i32
// (function i returns 100+i), the tables, one probe per table (exported
// as p<t>: for a funcref table, -1 for a null slot and otherwise what the
// slot's function returns; for an externref one, ref.is_null of the slot)
// and the element segments, as encoded.
type tableModule struct {
	funcs    int
	tables   []tableType
	globals  [][]byte // encoded global entries
	imports  [][]byte // encoded import entries (globals only)
	elems    [][]byte // encoded element segments
	noUnit   bool     // no () -> () type
	start    bool     // a start function: seen = p0(0)
	seenSlot uint32
}

func (m tableModule) encode() []byte {
	sec := func(id byte, n int, entries ...[]byte) []byte {
		body := AppendU32(nil, uint32(n))
		for _, e := range entries {
			body = append(body, e...)
		}
		return append(append([]byte{id}, AppendU32(nil, uint32(len(body)))...), body...)
	}
	out := []byte(Header)
	types := [][]byte{{0x60, 0, 1, 0x7F}, {0x60, 1, 0x7F, 1, 0x7F}}
	if !m.noUnit {
		types = append(types, []byte{0x60, 0, 0})
	}
	out = append(out, sec(SecType, len(types), types...)...)
	if len(m.imports) > 0 {
		out = append(out, sec(SecImport, len(m.imports), m.imports...)...)
	}
	var fns, code [][]byte
	for i := 0; i < m.funcs; i++ {
		fns = append(fns, []byte{0})
		body := AppendS32([]byte{0, 0x41}, int32(100+i))
		body = append(body, 0x0B)
		code = append(code, append(AppendU32(nil, uint32(len(body))), body...))
	}
	var exports [][]byte
	for t, tt := range m.tables {
		fns = append(fns, []byte{1})
		// local.get 0; table.get t; ref.is_null
		body := AppendU32([]byte{0, 0x20, 0, 0x25}, uint32(t))
		body = append(body, 0xD1)
		if tt.ref == 0x70 {
			// if (result i32) i32.const -1 else local.get 0;
			// call_indirect (type 0) t end
			body = append(body, 0x04, 0x7F, 0x41, 0x7F, 0x05, 0x20, 0, 0x11, 0)
			body = append(AppendU32(body, uint32(t)), 0x0B)
		}
		body = append(body, 0x0B)
		code = append(code, append(AppendU32(nil, uint32(len(body))), body...))
		exports = append(exports, AppendU32(append(AppendName(nil, fmt.Sprintf("p%d", t)), 0x00), uint32(m.funcs+t)))
	}
	globals := m.globals
	if m.start {
		// seen = p0(slot)
		fns = append(fns, []byte{2})
		body := AppendS32([]byte{0, 0x41}, int32(m.seenSlot))
		body = AppendU32(append(body, 0x10), uint32(m.funcs))
		body = append(body, 0x24, byte(len(m.imports)+len(globals)), 0x0B)
		code = append(code, append(AppendU32(nil, uint32(len(body))), body...))
		exports = append(exports, append(AppendName(nil, "seen"), 0x03, byte(len(m.imports)+len(globals))))
		globals = append(globals, []byte{0x7F, 1, 0x41, 0, 0x0B})
	}
	out = append(out, sec(SecFunction, len(fns), fns...)...)
	var tables [][]byte
	for _, t := range m.tables {
		tables = append(tables, AppendLimits([]byte{t.ref}, Limits{Min: t.min}))
	}
	out = append(out, sec(SecTable, len(tables), tables...)...)
	out = append(out, sec(SecMemory, 1, []byte{0, 1})...)
	if len(globals) > 0 {
		out = append(out, sec(SecGlobal, len(globals), globals...)...)
	}
	out = append(out, sec(SecExport, len(exports), exports...)...)
	if m.start {
		body := AppendU32(nil, uint32(len(fns)-1)) // imports are globals only
		out = append(out, append(append([]byte{SecStart}, AppendU32(nil, uint32(len(body)))...), body...)...)
	}
	if len(m.elems) > 0 {
		out = append(out, sec(SecElement, len(m.elems), m.elems...)...)
	}
	return append(out, sec(SecCode, len(code), code...)...)
}

// Element segments, encoded.
func activeFuncs(offset int32, fns ...uint32) []byte { // flags 0
	b := AppendS32([]byte{0, 0x41}, offset)
	b = AppendU32(append(b, 0x0B), uint32(len(fns)))
	for _, f := range fns {
		b = AppendU32(b, f)
	}
	return b
}

func activeTableExprs(table uint32, offsetExpr []byte, fns ...int) []byte { // flags 6
	b := AppendU32([]byte{6}, table)
	b = append(append(b, offsetExpr...), 0x70)
	b = AppendU32(b, uint32(len(fns)))
	for _, f := range fns {
		if f < 0 {
			b = append(b, 0xD0, 0x70, 0x0B)
		} else {
			b = append(AppendU32(append(b, 0xD2), uint32(f)), 0x0B)
		}
	}
	return b
}

func i32Expr(v int32) []byte { return append(AppendS32([]byte{0x41}, v), 0x0B) }

// tableContents instantiates wasm and returns each table's probe over
// each slot, and the seen global if the module exports one.
func tableContents(t *testing.T, r wazero.Runtime, wasm []byte, m tableModule) []int32 {
	t.Helper()
	ctx := context.Background()
	code, err := r.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	defer code.Close(ctx)
	inst, err := r.InstantiateModule(ctx, code, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	defer inst.Close(ctx)
	var out []int32
	for i, tt := range m.tables {
		p := inst.ExportedFunction(fmt.Sprintf("p%d", i))
		for s := uint64(0); s < tt.min; s++ {
			res, err := p.Call(ctx, s)
			if err != nil {
				t.Fatalf("table %d slot %d: %v", i, s, err)
			}
			out = append(out, int32(res[0]))
		}
	}
	if g := inst.ExportedGlobal("seen"); g != nil {
		out = append(out, int32(g.Get()))
	}
	return out
}

func newTestRuntime(t testing.TB) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	t.Cleanup(func() { r.Close(ctx) })
	return r
}

// The rewritten module's tables hold what the original's hold after
// instantiation, slot by slot, and its elements are no longer active.
func TestElementsInCodeSameTables(t *testing.T) {
	cases := map[string]tableModule{
		"one segment": {funcs: 4, tables: []tableType{{0x70, 6}},
			elems: [][]byte{activeFuncs(1, 0, 1, 2, 3)}},
		"overlapping segments and nulls": {funcs: 4, tables: []tableType{{0x70, 8}},
			elems: [][]byte{activeFuncs(0, 0, 1, 2, 3, 0, 1), activeTableExprs(0, i32Expr(2), 3, -1, 2)}},
		"two tables": {funcs: 3, tables: []tableType{{0x70, 3}, {0x70, 5}},
			elems: [][]byte{activeTableExprs(1, i32Expr(2), 2, 1, 0), activeFuncs(0, 1)}},
		"an externref table beside": {funcs: 2, tables: []tableType{{0x6F, 3}, {0x70, 3}},
			elems: [][]byte{{6, 0, 0x41, 1, 0x0B, 0x6F, 1, 0xD0, 0x6F, 0x0B}, activeTableExprs(1, i32Expr(0), 1, 0)}},
		"a start function reads the table": {funcs: 3, tables: []tableType{{0x70, 3}}, start: true, seenSlot: 2,
			elems: [][]byte{activeFuncs(0, 2, 1, 0)}},
		"no () -> () type": {funcs: 3, tables: []tableType{{0x70, 3}}, noUnit: true,
			elems: [][]byte{activeFuncs(0, 2, 1, 0)}},
		"an empty segment past the end": {funcs: 2, tables: []tableType{{0x70, 2}},
			elems: [][]byte{activeFuncs(9), activeFuncs(0, 1, 0)}},
		"a passive segment keeps its index": {funcs: 2, tables: []tableType{{0x70, 2}},
			elems: [][]byte{activeFuncs(0, 1), {1, 0x00, 1, 0}}},
		"no elements": {funcs: 1, tables: []tableType{{0x70, 2}}},
	}
	r := newTestRuntime(t)
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			wasm := m.encode()
			want := tableContents(t, r, wasm, m)
			out, err := elementsInCode(wasm, 0, math.MaxInt)
			if err != nil {
				t.Fatal(err)
			}
			if got := tableContents(t, r, out, m); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("tables after the rewrite %v, want %v", got, want)
			}
			if active := activeFuncrefEntries(t, out); active != 0 {
				t.Fatalf("%d entries of active funcref segments left", active)
			}
			if len(m.elems) == 0 && string(out) != string(wasm) {
				t.Fatal("a module without elements changed")
			}
		})
	}
}

// activeFuncrefEntries counts the entries of wasm's active segments of
// funcref tables.
func activeFuncrefEntries(t *testing.T, wasm []byte) int {
	t.Helper()
	secs, err := Sections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	var m elemModule
	if err := m.read(secs); err != nil {
		t.Fatal(err)
	}
	if m.elem < 0 {
		return 0
	}
	r := &Reader{B: secs[m.elem].Body}
	n, total := r.U32(), 0
	for i := uint32(0); i < n && r.Err == nil; i++ {
		flags := r.U32()
		table := uint32(0)
		if flags&3 == 2 {
			table = r.U32()
		}
		if flags&1 == 0 {
			constExpr(r)
		}
		if flags&3 != 0 {
			r.Byte()
		}
		k := r.U32()
		for j := uint32(0); j < k; j++ {
			if flags&4 == 0 {
				r.U32()
			} else {
				constExpr(r)
			}
		}
		if flags&1 == 0 && m.tables[table].ref == 0x70 {
			total += int(k)
		}
	}
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return total
}

// What ElementsInCode cannot do the same way it refuses, and the module
// is used as it is.
func TestElementsInCodeRefuses(t *testing.T) {
	importedG := append(AppendName(AppendName(nil, "env"), "g"), ImportGlobal, 0x7F, 0)
	cases := map[string]tableModule{
		// wazero applies the segments before it and ignores it and every
		// one after it; the specification traps. wazero evaluates a
		// global.get offset only of an imported global (the host refuses
		// those).
		"a segment past the table's end": {funcs: 2, tables: []tableType{{0x70, 2}},
			elems: [][]byte{activeFuncs(0, 1), activeFuncs(1, 0, 1), activeFuncs(0, 0)}},
		"an offset from an imported global": {funcs: 2, tables: []tableType{{0x70, 4}},
			imports: [][]byte{importedG},
			elems:   [][]byte{activeTableExprs(0, []byte{0x23, 0, 0x0B}, 1, 0)}},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := elementsInCode(m.encode(), 0, math.MaxInt)
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("got %d bytes and error %v; want an error wrapping ErrUnsupported", len(out), err)
			}
		})
	}
	// wazero's behaviour the first case relies on: the first segment
	// only.
	r := newTestRuntime(t)
	m := cases["a segment past the table's end"]
	if got := fmt.Sprint(tableContents(t, r, m.encode(), m)); got != "[101 -1]" {
		t.Fatalf("wazero's tables %s; ElementsInCode's refusal assumes [101 -1]", got)
	}
}

// The runners the host runs most: the QuickJS runner, and a Go guest
// (TestElementsInCodeGo). Rewritten and then instrumented, each is valid
// and instantiates with no active funcref segment left.
func TestElementsInCodeRunner(t *testing.T) {
	wasm, err := os.ReadFile("../../guest-sdk/js/quickjs/runner.wasm")
	if err != nil {
		t.Fatal(err)
	}
	checkRewritten(t, wasm)
}

func checkRewritten(t *testing.T, wasm []byte) {
	out, err := ElementsInCode(wasm, 0)
	if err != nil {
		t.Fatal(err)
	}
	if activeFuncrefEntries(t, wasm) == 0 {
		t.Fatal("the module has no active funcref segment to move")
	}
	if n := activeFuncrefEntries(t, out); n != 0 {
		t.Fatalf("%d entries of active funcref segments left", n)
	}
	inst, err := Instrument(out)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := newTestRuntime(t)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	code, err := r.CompileModule(ctx, inst)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.InstantiateModule(ctx, code, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatal(err)
	}
	m.Close(ctx)
}

// Below min entries the module is returned as it is; at min it is
// rewritten.
func TestElementsInCodeMin(t *testing.T) {
	m := tableModule{funcs: 3, tables: []tableType{{0x70, 4}}, elems: [][]byte{activeFuncs(0, 2, 1), activeFuncs(2, 0)}}
	wasm := m.encode()
	if out, err := elementsInCode(wasm, 4, math.MaxInt); err != nil || string(out) != string(wasm) {
		t.Fatalf("3 entries, min 4: changed (%v)", err)
	}
	if out, err := elementsInCode(wasm, 3, math.MaxInt); err != nil || string(out) == string(wasm) {
		t.Fatalf("3 entries, min 3: unchanged (%v)", err)
	}
}

// ElementsInCode moves at most ElementsInCodeMax entries, and at most one
// per ElementsInCodeBytes of the module: the added function passes
// Check's caps; one entry more, or a smaller module, and it is refused (a
// million entries took wazero 72 s and 7.6 GB to compile once rewritten;
// 16,384 in a 16 KB module, 1.5 MB of machine code).
func TestElementsInCodeMax(t *testing.T) {
	half := make([]uint32, ElementsInCodeMax/2)
	m := tableModule{funcs: 1, tables: []tableType{{0x70, ElementsInCodeMax + 1}},
		elems: [][]byte{activeFuncs(0, half...), activeFuncs(ElementsInCodeMax/2, half...)}}
	// pad appends a custom section making wasm size bytes or a few more.
	pad := func(wasm []byte, size int) []byte {
		n := max(size-len(wasm), 0)
		body := append(AppendName(nil, "pad"), make([]byte, n)...)
		return append(append(append(wasm, SecCustom), AppendU32(nil, uint32(len(body)))...), body...)
	}
	small := m.encode()
	if out, err := ElementsInCode(small, ElementsInCodeMin); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%d entries in %d bytes: got %d bytes and error %v; want ErrUnsupported", ElementsInCodeMax, len(small), len(out), err)
	}
	out, err := ElementsInCode(pad(small, ElementsInCodeMax*ElementsInCodeBytes), ElementsInCodeMin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(out, DefaultCaps()); err != nil {
		t.Fatalf("rewritten at the cap: %v", err)
	}
	m.elems = append(m.elems, activeFuncs(ElementsInCodeMax, 0))
	if out, err := ElementsInCode(pad(m.encode(), 2*ElementsInCodeMax*ElementsInCodeBytes), ElementsInCodeMin); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%d entries: got %d bytes and error %v; want ErrUnsupported", ElementsInCodeMax+1, len(out), err)
	}
}

// The start function ElementsInCode adds only writes tables (i32.const,
// ref.func, table.set) and then calls the module's own start function if
// it had one: no guest code runs before it did (a snapshot has none; its
// memory is written after instantiation).
func TestElementsInCodeStartOnlyFillsTables(t *testing.T) {
	for _, m := range []tableModule{
		{funcs: 3, tables: []tableType{{0x70, 3}, {0x70, 2}}, elems: [][]byte{activeFuncs(0, 2, 1, 0), activeTableExprs(1, i32Expr(0), 1, -1)}},
		{funcs: 3, tables: []tableType{{0x70, 3}}, start: true, elems: [][]byte{activeFuncs(0, 2, 1, 0)}},
	} {
		out, err := elementsInCode(m.encode(), 0, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		secs, err := Sections(out)
		if err != nil {
			t.Fatal(err)
		}
		var em elemModule
		if err := em.read(secs); err != nil {
			t.Fatal(err)
		}
		if em.start != int64(em.importedFuncs+em.definedFuncs-1) {
			t.Fatalf("start function %d, want the added one, %d", em.start, em.importedFuncs+em.definedFuncs-1)
		}
		r := &Reader{B: secs[em.code].Body}
		for n := r.U32(); n > 1; n-- {
			r.Bytes(int(r.U32()))
		}
		fn := &Reader{B: r.Bytes(int(r.U32()))}
		if fn.Locals() != 0 {
			t.Fatal("the added function has locals")
		}
		var ops []byte
		calls := 0
		for !fn.Done() {
			op, idx := fn.Instr()
			switch op {
			case 0x41, 0xD2, 0x26, 0x0B:
			case 0x10:
				if !m.start || idx != uint32(m.funcs+len(m.tables)) {
					t.Fatalf("the added function calls function %d", idx)
				}
				calls++
			default:
				t.Fatalf("the added function has opcode 0x%02x", op)
			}
			ops = append(ops, op)
		}
		if fn.Err != nil {
			t.Fatal(fn.Err)
		}
		if m.start && (calls != 1 || ops[len(ops)-2] != 0x10) {
			t.Fatalf("the module's start function is not called last: %x", ops)
		}
	}
}

// BenchmarkElementsInCode instantiates a module whose table holds n
// functions, as it is and rewritten (ElementsInCode), side by side, to
// choose ElementsInCodeMin (cpu-ns/op is the process's CPU time, the
// garbage collector's included, which a busy machine inflates less than
// the wall time):
//
//	go test ./internal/wasmrewrite -run '^$' -bench ElementsInCode -benchtime 20000x -count 3
func BenchmarkElementsInCode(b *testing.B) {
	ctx := context.Background()
	r := newTestRuntime(b)
	for _, n := range []int{16, 64, 128, 256, 420, 2048} {
		m := tableModule{funcs: n, tables: []tableType{{0x70, uint64(n)}}}
		var fns []uint32
		for i := range n {
			fns = append(fns, uint32(i))
		}
		m.elems = [][]byte{activeFuncs(0, fns...)}
		wasm := m.encode()
		out, err := elementsInCode(wasm, 0, math.MaxInt)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			wasm []byte
		}{{"segments", wasm}, {"code", out}} {
			code, err := r.CompileModule(ctx, c.wasm)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				cfg := wazero.NewModuleConfig().WithName("")
				cpu := processCPU()
				for b.Loop() {
					mod, err := r.InstantiateModule(ctx, code, cfg)
					if err != nil {
						b.Fatal(err)
					}
					mod.Close(ctx)
				}
				if cpu > 0 {
					b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
				}
			})
			code.Close(ctx)
		}
	}
}

// BenchmarkElementsInCodeCompile compiles a module whose table holds n
// functions, as it is and rewritten, side by side: what the rewrite adds
// to a compilation at ElementsInCodeMax, and past it (one function
// entered a million times, which ElementsInCode refuses):
//
//	go test ./internal/wasmrewrite -run '^$' -bench ElementsInCodeCompile -benchtime 1x -benchmem
func BenchmarkElementsInCodeCompile(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct{ n, funcs int }{{ElementsInCodeMax, ElementsInCodeMax}, {1 << 20, 1}} {
		m := tableModule{funcs: c.funcs, tables: []tableType{{0x70, uint64(c.n)}}}
		fns := make([]uint32, c.n)
		for i := range fns {
			fns[i] = uint32(i % c.funcs)
		}
		m.elems = [][]byte{activeFuncs(0, fns...)}
		wasm := m.encode()
		out, err := elementsInCode(wasm, 0, c.n)
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range []struct {
			name string
			wasm []byte
		}{{"segments", wasm}, {"code", out}} {
			b.Run(fmt.Sprintf("n=%d/%s", c.n, w.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
					if _, err := r.CompileModule(ctx, w.wasm); err != nil {
						b.Fatal(err)
					}
					r.Close(ctx)
				}
			})
		}
	}
}
