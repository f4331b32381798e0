package wasmrewrite

import (
	"fmt"
	"slices"
)

// ElementsInCode moves the filling of a module's funcref tables from its
// element section into its code, for a cheaper instantiation.
//
// wazero applies an active element segment at every instantiation by
// evaluating each entry's constant expression in Go (a generic evaluator,
// its closures and a result slice per entry); a QuickJS runner's 420
// entries were a third of a tools/call's own CPU. Code does the same
// writes for a few nanoseconds each: ElementsInCode makes every active
// segment of a funcref table declarative (its functions stay declared for
// ref.func; the engine neither evaluates nor applies it) and adds a
// function that writes the table's final content, slot by slot (i32.const
// slot; ref.func f; table.set t), and makes it the start function, calling
// the module's own start function (if any) after it: the table is full
// before any other guest code runs, as before.
//
// The offsets must be known before instantiation: each an i32.const (wazero
// reads a global.get offset only from an imported global, which the host
// refuses), and each entry a ref.func or ref.null. A segment that does
// not fit its table (wazero ignores it and every segment after it, where
// the specification traps) and every other module ElementsInCode does not
// understand (an imported table, an offset read from a global, an entry
// read from a global) are refused with an error wrapping ErrUnsupported; the host
// then uses the module as it is. Segments of externref tables stay as
// they are (wazero writes nulls for them). A module with no active funcref
// segment, or whose active funcref segments hold fewer than min entries,
// is returned as it is (see ElementsInCodeMin); one whose active funcref
// segments hold more than ElementsInCodeMax entries, or more than one per
// ElementsInCodeBytes of the module, is refused.
//
// Give it only modules wazero validated: it relies on their indices and
// types being consistent.
func ElementsInCode(wasm []byte, min int) ([]byte, error) {
	most := ElementsInCodeMax
	if n := len(wasm) / ElementsInCodeBytes; n < most {
		most = n
	}
	return elementsInCode(wasm, min, most)
}

// elementsInCode is ElementsInCode moving at most max entries.
func elementsInCode(wasm []byte, min, max int) ([]byte, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, err
	}
	var m elemModule
	if err := m.read(secs); err != nil {
		return nil, err
	}
	if m.elem < 0 {
		return wasm, nil
	}
	elemBody, writes, moved, err := m.segments(secs[m.elem].Body, max)
	if err != nil {
		return nil, err
	}
	if elemBody == nil || moved < min {
		return wasm, nil
	}
	typeBody, typeIdx := m.unitType(secs)
	fnIdx := m.importedFuncs + m.definedFuncs
	body := m.fillBody(writes)
	funcBody := AppendU32(nil, m.definedFuncs+1)
	codeBody := AppendU32(nil, m.definedFuncs+1)
	if m.fn >= 0 {
		funcBody = append(funcBody, m.rest(secs[m.fn].Body)...)
	}
	funcBody = AppendU32(funcBody, typeIdx)
	if m.code >= 0 {
		codeBody = append(codeBody, m.rest(secs[m.code].Body)...)
	}
	codeBody = append(AppendU32(codeBody, uint32(len(body))), body...)
	repl := map[byte][]byte{
		SecType:     typeBody,
		SecFunction: funcBody,
		SecStart:    AppendU32(nil, fnIdx),
		SecElement:  elemBody,
		SecCode:     codeBody,
	}
	enc := NewEncoder(len(wasm) + len(body) + 64)
	var done [SecTag + 1]bool
	// Sections ElementsInCode adds go where the binary format puts them.
	add := func(upTo byte) {
		for _, id := range []byte{SecType, SecFunction, SecStart, SecCode} {
			if !done[id] && (upTo == SecCustom || before(id, upTo)) {
				enc.Section(id, repl[id])
				done[id] = true
			}
		}
	}
	for _, s := range secs {
		if s.ID != SecCustom {
			add(s.ID)
		}
		if b, ok := repl[s.ID]; ok && s.ID != SecCustom {
			enc.Section(s.ID, b)
			done[s.ID] = true
			continue
		}
		enc.Section(s.ID, s.Body)
	}
	add(SecCustom)
	return enc.Bytes(), nil
}

// ElementsInCodeMin is the fewest entries of active funcref segments for
// which the host has ElementsInCode move them. The start function it adds
// costs each instantiation a call, about 4.5 µs of CPU (wazero gives it a
// call engine with a 10 KiB stack), and each entry then costs about 50 ns
// less: about 90 entries pay for the call, and 256 leave room for the
// garbage the stack adds (BenchmarkElementsInCode). The QuickJS runner has
// 420 entries, a Go module thousands, the C example guest 4.
const ElementsInCodeMin = 256

// ElementsInCodeMax is the most entries of active funcref segments
// ElementsInCode moves; a module with more is refused (ErrUnsupported)
// and keeps its segments. Each entry becomes about 9 bytes of one
// function's code, and wazero's compile time grows faster than that
// function: a 1 MB module with a million entries took 47 s and 7 GB of
// allocations to compile once rewritten, 0.1 s as given; at the cap, 0.6
// s against 0.06 s, for a function of about 150 KB, within Check's cap
// on a function body (BenchmarkElementsInCodeCompile). The Go probe has
// 2,436 entries.
const ElementsInCodeMax = 16_384

// ElementsInCodeBytes is the fewest bytes of module per entry
// ElementsInCode moves. Each entry becomes about 92 bytes of machine code,
// which the host's code budget counts only as part of the module's size
// (five times it): at one entry per 256 bytes the added code stays under
// 0.4 times the module's size. The QuickJS runner has one entry per 2,122
// bytes, the Go probe one per 1,600; a 16 KB module naming one function
// 16,384 times had 1.5 MB of machine code against 82 KB counted.
const ElementsInCodeBytes = 256

// elemModule is what ElementsInCode reads of a module.
type elemModule struct {
	importedFuncs, definedFuncs uint32
	types                       uint32 // the type section's length
	unit                        int64  // index of a () -> () type, or -1
	tables                      []tableType
	start                       int64 // the start function, or -1
	elem, fn, code              int   // section positions, or -1
}

type tableType struct {
	ref byte
	min uint64
}

func (m *elemModule) read(secs []Section) error {
	m.unit, m.start, m.elem, m.fn, m.code = -1, -1, -1, -1, -1
	for k, s := range secs {
		r := &Reader{B: s.Body}
		switch s.ID {
		case SecType:
			m.types = r.U32()
			for i := uint32(0); i < m.types && r.Err == nil; i++ {
				if r.Byte() != 0x60 {
					return fmt.Errorf("%w: a type that is not a function type", ErrUnsupported)
				}
				start := r.I
				for range 2 {
					for n := r.U32(); n > 0 && r.Err == nil; n-- {
						valType(r)
					}
				}
				if r.I-start == 2 && m.unit < 0 {
					m.unit = int64(i)
				}
			}
		case SecImport:
			imps, err := readImports(s.Body)
			if err != nil {
				return err
			}
			for _, im := range imps {
				switch im.Kind {
				case ImportFunc:
					m.importedFuncs++
				case ImportTable:
					return fmt.Errorf("%w: it imports a table", ErrUnsupported)
				}
			}
		case SecFunction:
			m.definedFuncs, m.fn = r.U32(), k
		case SecTable:
			for n := r.U32(); n > 0 && r.Err == nil; n-- {
				t := tableType{ref: r.Byte()}
				t.min = r.Limits().Min
				m.tables = append(m.tables, t)
			}
		case SecStart:
			m.start = int64(r.U32())
		case SecElement:
			m.elem = k
		case SecCode:
			m.code = k
		}
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// rest returns a vector section's body after its length.
func (m *elemModule) rest(b []byte) []byte {
	r := &Reader{B: b}
	r.U32()
	return b[r.I:]
}

// unitType returns the type section with a () -> () type (appended if it
// has none) and that type's index.
func (m *elemModule) unitType(secs []Section) ([]byte, uint32) {
	var old []byte
	for _, s := range secs {
		if s.ID == SecType {
			old = s.Body
		}
	}
	if m.unit >= 0 {
		return old, uint32(m.unit)
	}
	b := AppendU32(nil, m.types+1)
	if old != nil {
		b = append(b, m.rest(old)...)
	}
	return append(b, 0x60, 0, 0), m.types
}

// tableWrite is one slot of a table the added function sets.
type tableWrite struct {
	table uint32
	slot  uint64
	fn    uint32
}

// segments reads the element section and returns it with its funcref
// segments declarative (nil if there are none to change), the final
// content of their tables and how many entries they hold; more than max
// entries are refused.
func (m *elemModule) segments(b []byte, max int) ([]byte, []tableWrite, int, error) {
	r := &Reader{B: b}
	n := r.U32()
	out := AppendU32(make([]byte, 0, len(b)), n)
	type slot struct{ table, slot uint64 }
	final := map[slot]int64{} // the function, or -1 for null
	moved := 0
	for i := uint32(0); i < n && r.Err == nil; i++ {
		start := r.I
		flags := r.U32()
		if flags > 7 {
			return nil, nil, 0, fmt.Errorf("%w: element segment flags %d", ErrUnsupported, flags)
		}
		active := flags&1 == 0
		var table uint32
		if flags&3 == 2 {
			table = r.U32()
		}
		var offset int64 = -1
		if active {
			start := r.I
			if constExpr(r); r.Err == nil {
				if v, err := constValue(0x7F, b[start:r.I]); err == nil {
					offset = int64(uint32(v))
				}
			}
		}
		kind := byte(0x70) // flags 0 and 4: funcref
		if flags&3 != 0 {
			if kind = r.Byte(); flags&4 == 0 && kind == 0x00 {
				kind = 0x70 // elemkind funcref
			}
		}
		entriesAt := r.I
		k := r.U32()
		if active && kind == 0x70 && int(table) < len(m.tables) && m.tables[table].ref == 0x70 &&
			uint64(moved)+uint64(k) > uint64(max) {
			// Before reading entries a huge segment would take long to read.
			return nil, nil, 0, fmt.Errorf("%w: active funcref segments of more than %d entries", ErrUnsupported, max)
		}
		var fns []int64
		for j := uint32(0); j < k && r.Err == nil; j++ {
			if flags&4 == 0 {
				fns = append(fns, int64(r.U32()))
				continue
			}
			switch op, idx := r.Instr(); {
			case op == 0xD2 && r.Byte() == 0x0B: // ref.func f end
				fns = append(fns, int64(idx))
			case op == 0xD0 && r.Byte() == 0x0B: // ref.null t end
				fns = append(fns, -1)
			default:
				r.Fail("an element that is neither ref.func nor ref.null")
			}
		}
		if r.Err != nil {
			return nil, nil, 0, r.Err
		}
		if !active {
			out = append(out, b[start:r.I]...)
			continue
		}
		if offset < 0 {
			return nil, nil, 0, fmt.Errorf("%w: element segment %d's offset is not a constant", ErrUnsupported, i)
		}
		if int(table) >= len(m.tables) {
			return nil, nil, 0, fmt.Errorf("%w: element segment %d names table %d, which it does not have", ErrUnsupported, i, table)
		}
		t := m.tables[table]
		if k > 0 && uint64(offset)+uint64(k) > t.min {
			return nil, nil, 0, fmt.Errorf("%w: element segment %d does not fit its table", ErrUnsupported, i)
		}
		if t.ref != 0x70 || kind != 0x70 {
			out = append(out, b[start:r.I]...)
			continue
		}
		for j, f := range fns {
			final[slot{uint64(table), uint64(offset) + uint64(j)}] = f
		}
		// Declarative: 3 (elemkind, function indices) or 7 (reftype,
		// expressions), the same entries.
		if flags&4 == 0 {
			out = append(out, 3, 0x00)
		} else {
			out = append(out, 7, kind)
		}
		out = append(out, b[entriesAt:r.I]...)
		moved += len(fns)
	}
	if r.Err == nil && !r.Done() {
		r.Fail("trailing bytes in the element section")
	}
	if r.Err != nil {
		return nil, nil, 0, r.Err
	}
	if moved == 0 {
		return nil, nil, 0, nil
	}
	var writes []tableWrite
	for s, f := range final {
		if f >= 0 {
			writes = append(writes, tableWrite{uint32(s.table), s.slot, uint32(f)})
		}
	}
	slices.SortFunc(writes, func(a, b tableWrite) int {
		if a.table != b.table {
			return int(a.table) - int(b.table)
		}
		switch {
		case a.slot < b.slot:
			return -1
		case a.slot > b.slot:
			return 1
		}
		return 0
	})
	return out, writes, moved, nil
}

// fillBody is the added function's body: each write, then a call of the
// module's start function.
func (m *elemModule) fillBody(writes []tableWrite) []byte {
	b := make([]byte, 0, 1+len(writes)*10+8)
	b = append(b, 0) // no locals
	for _, w := range writes {
		b = AppendS32(append(b, 0x41), int32(uint32(w.slot)))
		b = AppendU32(append(b, 0xD2), w.fn)
		b = AppendU32(append(b, 0x26), w.table)
	}
	if m.start >= 0 {
		b = AppendU32(append(b, 0x10), uint32(m.start))
	}
	return append(b, 0x0B)
}
