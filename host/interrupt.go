package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
)

// Used when Config.InstrumentLoops is set (wasmcp serve sets it; see its doc).
//
// A guest must stop when its call's deadline passes or its call is
// canceled, even in a loop that never calls the host. wazero's own way,
// WithCloseOnContextDone, calls out of the compiled code into Go at every
// loop iteration, which made a small C tool's call several times slower
// (wazero issue 2466). Instead, the host rewrites each module once, before
// compiling it: it adds a mutable i32 global, exports it as
// interruptExport, and makes every loop header read it and trap
// (unreachable) when it is not zero. A call sets the global when its
// context ends; the check is a load and a branch in the compiled code.
//
// A module the rewriter does not understand (an opcode outside the
// proposals wazero implements, an export already named interruptExport)
// is compiled as it is on a runtime with WithCloseOnContextDone, so it is
// still interruptible, only slower.

// interruptExport is the name of the global instrument adds.
const interruptExport = "wasmcp.interrupt"

// errNotInstrumentable is returned by instrument for modules it leaves
// alone.
var errNotInstrumentable = errors.New("module not instrumentable")

// instrument returns wasm with the interrupt global and the loop checks.
func instrument(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || string(wasm[4:8]) != "\x01\x00\x00\x00" {
		return nil, fmt.Errorf("%w: not a WebAssembly 1.0 binary", errNotInstrumentable)
	}
	type section struct {
		id   byte
		body []byte
	}
	var secs []section
	r := &reader{b: wasm, i: 8}
	for !r.done() {
		id := r.byte()
		n := r.u32()
		body := r.bytes(int(n))
		if r.err != nil {
			return nil, r.err
		}
		secs = append(secs, section{id, body})
	}
	var importedGlobals, definedGlobals uint32
	hasGlobal, hasExport := false, false
	for _, s := range secs {
		switch s.id {
		case 2:
			n, err := countImportedGlobals(s.body)
			if err != nil {
				return nil, err
			}
			importedGlobals = n
		case 6:
			hasGlobal = true
			sr := &reader{b: s.body}
			definedGlobals = sr.u32()
			if sr.err != nil {
				return nil, sr.err
			}
		case 7:
			hasExport = true
		}
	}
	idx := importedGlobals + definedGlobals // the stop flag; idx+1 is the budget
	check := loopCheck(idx)

	out := make([]byte, 0, len(wasm)+len(wasm)/8+64)
	out = append(out, wasm[:8]...)
	emit := func(id byte, body []byte) {
		out = append(out, id)
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	// rank orders the non-custom sections; the tag section (13) sits
	// between memory and global, data count (12) before code.
	rank := map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}
	// Two i32 mutable globals: the stop flag (0) and the yield budget.
	ourGlobal := []byte{0x7F, 0x01, 0x41, 0x00, 0x0B, 0x7F, 0x01, 0x41}
	ourGlobal = appendS32(ourGlobal, yieldEvery)
	ourGlobal = append(ourGlobal, 0x0B)
	ourExport := appendName(nil, interruptExport)
	ourExport = append(ourExport, 0x03)
	ourExport = appendU32(ourExport, idx)
	for _, s := range secs {
		if s.id != 0 {
			if !hasGlobal && rank[s.id] > rank[6] {
				emit(6, append([]byte{2}, ourGlobal...))
				hasGlobal = true
			}
			if !hasExport && rank[s.id] > rank[7] {
				emit(7, append([]byte{1}, ourExport...))
				hasExport = true
			}
		}
		switch s.id {
		case 6:
			sr := &reader{b: s.body}
			n := sr.u32()
			body := appendU32(nil, n+2)
			body = append(body, s.body[sr.i:]...)
			emit(6, append(body, ourGlobal...))
		case 7:
			body, err := addExport(s.body, ourExport)
			if err != nil {
				return nil, err
			}
			emit(7, body)
		case 10:
			body, err := instrumentCode(s.body, check, idx)
			if err != nil {
				return nil, err
			}
			emit(10, body)
		default:
			emit(s.id, s.body)
		}
	}
	if !hasGlobal {
		emit(6, append([]byte{2}, ourGlobal...))
	}
	if !hasExport {
		emit(7, append([]byte{1}, ourExport...))
	}
	return out, nil
}

// yieldEvery is how many loop iterations run between two exits of the
// compiled code into Go (memory.grow 0). The Go runtime cannot preempt
// compiled WebAssembly: without these exits a guest spinning in a loop
// would hold its thread through a garbage collection's stop-the-world, and
// so stop every goroutine of the server, including the one that would set
// its stop flag. One exit costs about as much as a hundred iterations of
// a small loop; every 16384 iterations it is noise.
const yieldEvery = 1 << 14

// loopCheck is the code inserted at every loop header, with stop the
// index of the stop flag and stop+1 that of the budget:
//
//	global.get stop; if; unreachable; end
//	budget = budget - 1
//	if budget == 0 { drop(memory.grow 0); budget = yieldEvery }
func loopCheck(stop uint32) []byte {
	budget := stop + 1
	b := append(appendU32([]byte{0x23}, stop), 0x04, 0x40, 0x00, 0x0B)
	b = appendU32(append(appendU32(append(b, 0x23), budget), 0x41, 0x01, 0x6B, 0x24), budget)
	b = append(appendU32(append(b, 0x23), budget), 0x45, 0x04, 0x40)
	b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1A, 0x41)
	b = appendS32(b, yieldEvery)
	b = append(appendU32(append(b, 0x24), budget), 0x0B)
	return b
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// countImportedGlobals reads an import section.
func countImportedGlobals(b []byte) (uint32, error) {
	r := &reader{b: b}
	n := r.u32()
	var globals uint32
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.name()
		r.name()
		switch r.byte() {
		case 0x00: // func
			r.u32()
		case 0x01: // table
			r.byte()
			r.limits()
		case 0x02: // memory
			r.limits()
		case 0x03: // global
			r.byte()
			r.byte()
			globals++
		case 0x04: // tag
			r.byte()
			r.u32()
		default:
			return 0, fmt.Errorf("%w: unknown import kind", errNotInstrumentable)
		}
	}
	return globals, r.err
}

// addExport appends an export entry, refusing a module that already has
// an export of that name.
func addExport(b, entry []byte) ([]byte, error) {
	r := &reader{b: b}
	n := r.u32()
	start := r.i
	for i := uint32(0); i < n && r.err == nil; i++ {
		if r.name() == interruptExport {
			return nil, fmt.Errorf("%w: it exports %s itself", errNotInstrumentable, interruptExport)
		}
		r.byte()
		r.u32()
	}
	if r.err != nil {
		return nil, r.err
	}
	out := appendU32(nil, n+1)
	out = append(out, b[start:]...)
	return append(out, entry...), nil
}

// instrumentCode rewrites a code section, inserting check after the block
// type of every loop instruction.
func instrumentCode(b, check []byte, globals uint32) ([]byte, error) {
	r := &reader{b: b}
	n := r.u32()
	out := appendU32(make([]byte, 0, len(b)+len(b)/8), n)
	var body []byte
	for i := uint32(0); i < n; i++ {
		size := r.u32()
		fn := r.bytes(int(size))
		if r.err != nil {
			return nil, r.err
		}
		var err error
		if body, err = instrumentBody(body[:0], fn, check, globals); err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if !r.done() {
		return nil, fmt.Errorf("%w: trailing bytes in the code section", errNotInstrumentable)
	}
	return out, nil
}

// instrumentBody rewrites one function body. globals is the number of
// globals the module has (imported and defined): an instruction naming
// any other global makes the module invalid — and, were it instrumented,
// would name the stop flag or the budget and could clear them — so it is
// left to wazero's validation, which refuses it.
func instrumentBody(out, fn, check []byte, globals uint32) ([]byte, error) {
	r := &reader{b: fn}
	locals := r.u32()
	for i := uint32(0); i < locals && r.err == nil; i++ {
		r.u32()
		r.byte()
	}
	if r.err != nil {
		return nil, r.err
	}
	copied := 0
	for !r.done() {
		op := r.byte()
		switch {
		case op == 0x03: // loop bt
			r.blockType()
			out = append(out, fn[copied:r.i]...)
			out = append(out, check...)
			copied = r.i
		case op == 0x02 || op == 0x04: // block, if
			r.blockType()
		case op == 0x23 || op == 0x24: // global.get, global.set
			if g := r.u32(); r.err == nil && g >= globals {
				return nil, fmt.Errorf("%w: it names global %d, which it does not have", errNotInstrumentable, g)
			}
		case op == 0x0C || op == 0x0D || op == 0x10 || (op >= 0x20 && op <= 0x26) || op == 0xD2:
			r.u32() // br, br_if, call, local get/set/tee, table get/set, ref.func
		case op == 0x0E: // br_table
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.u32()
			}
			r.u32()
		case op == 0x11: // call_indirect
			r.u32()
			r.u32()
		case op == 0x1C: // select t*
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.byte()
			}
		case op >= 0x28 && op <= 0x3E:
			r.memarg()
		case op == 0x3F || op == 0x40: // memory.size, memory.grow
			r.u32()
		case op == 0x41:
			r.leb(5)
		case op == 0x42:
			r.leb(10)
		case op == 0x43:
			r.bytes(4)
		case op == 0x44:
			r.bytes(8)
		case op == 0xD0: // ref.null t
			r.byte()
		case op == 0xFC:
			misc(r)
		case op == 0xFD:
			simd(r)
		case op == 0xFE:
			if sub := r.u32(); sub == 0x03 { // atomic.fence
				r.byte()
			} else {
				r.memarg()
			}
		case op <= 0x01, op == 0x05, op == 0x0B, op == 0x0F, op == 0x1A, op == 0x1B, op >= 0x45 && op <= 0xC4, op == 0xD1:
			// no immediates
		default:
			return nil, fmt.Errorf("%w: opcode 0x%02x", errNotInstrumentable, op)
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	return append(out, fn[copied:]...), nil
}

// misc reads the immediates of a 0xFC instruction.
func misc(r *reader) {
	switch sub := r.u32(); {
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init data mem
		r.u32()
		r.u32()
	case sub == 9, sub == 13, sub >= 15 && sub <= 17: // data.drop, elem.drop, table.grow/size/fill
		r.u32()
	case sub == 10, sub == 12, sub == 14: // memory.copy, table.init, table.copy
		r.u32()
		r.u32()
	case sub == 11: // memory.fill
		r.u32()
	default:
		r.fail(fmt.Sprintf("opcode 0xfc %d", sub))
	}
}

// simd reads the immediates of a 0xFD instruction.
func simd(r *reader) {
	switch sub := r.u32(); {
	case sub <= 11, sub == 92, sub == 93: // loads, stores, load_zero
		r.memarg()
	case sub == 12, sub == 13: // v128.const, i8x16.shuffle
		r.bytes(16)
	case sub >= 21 && sub <= 34: // extract/replace lane
		r.byte()
	case sub >= 84 && sub <= 91: // load/store lane
		r.memarg()
		r.byte()
	case sub <= 275:
		// no immediates
	default:
		r.fail(fmt.Sprintf("opcode 0xfd %d", sub))
	}
}

// reader decodes a WebAssembly binary; the first error sticks.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) done() bool { return r.err != nil || r.i >= len(r.b) }

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", errNotInstrumentable, what, r.i)
	}
}

func (r *reader) byte() byte {
	if r.err != nil || r.i >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.i {
		r.fail("unexpected end")
		return nil
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s
}

// leb skips a LEB128 number of at most max bytes and returns its low 64
// bits (as unsigned).
func (r *reader) leb(max int) uint64 {
	var v uint64
	for k := 0; k < max; k++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint64(c&0x7F) << (7 * k)
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail("LEB128 too long")
	return 0
}

func (r *reader) u32() uint32 { return uint32(r.leb(5)) }

func (r *reader) name() string { return string(r.bytes(int(r.u32()))) }

func (r *reader) limits() {
	flags := r.byte()
	r.leb(10)
	if flags&1 != 0 {
		r.leb(10)
	}
}

func (r *reader) memarg() {
	if align := r.u32(); align&0x40 != 0 { // multi-memory: not in wazero
		r.fail("multi-memory memarg")
	}
	r.leb(10)
}

func (r *reader) blockType() {
	if r.err != nil || r.i >= len(r.b) {
		r.fail("unexpected end")
		return
	}
	switch r.b[r.i] {
	case 0x40, 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
		r.i++
	default:
		r.leb(5) // a type index (s33)
	}
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}

// compile compiles wasm on the runtime for its memory cap that closes
// instances when their context ends. With Config.InstrumentLoops it then
// instruments the (now validated) module and compiles that on a runtime
// without WithCloseOnContextDone; when the module cannot be instrumented
// the first compilation is kept. interrupt
// reports whether the module was instrumented. A nil runtime means the
// engine could not provide one (err says why); otherwise err is the
// module's compile error.
func (e *Engine) compile(ctx context.Context, name string, pages uint32, wasm []byte) (r wazero.Runtime, code wazero.CompiledModule, interrupt bool, err error) {
	if r, err = e.runtime(ctx, pages, true); err != nil {
		return nil, nil, false, err
	}
	// The module as it is comes first, even when it will be instrumented:
	// wazero validates it, so the rewriter only ever sees valid modules
	// and can never turn an invalid one into a valid one (say, one whose
	// code names a global that only the rewrite adds: the stop flag). With
	// the compilation cache this costs one more cache read per load.
	if code, err = r.CompileModule(ctx, wasm); err != nil || !e.cfg.InstrumentLoops {
		return r, code, false, err
	}
	iw, ierr := instrument(wasm)
	if ierr == nil {
		ri, rerr := e.runtime(ctx, pages, false)
		if rerr != nil {
			_ = code.Close(ctx)
			return nil, nil, false, rerr
		}
		icode, cerr := ri.CompileModule(ctx, iw)
		if cerr == nil {
			_ = code.Close(ctx)
			return ri, icode, true, nil
		}
		ierr = cerr
	}
	e.log.Info("module not instrumented; wazero checks its deadline", "module", name, "reason", ierr)
	return r, code, false, nil
}
