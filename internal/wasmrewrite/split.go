package wasmrewrite

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Split separates a snapshot (Snapshot's output) into code that does not
// depend on the state and the state itself, so that snapshots of one
// module taken with different inputs (scripts on one JavaScript runner)
// share one compilation: the code is the snapshot with no data segments,
// its memory's minimum at one page, every mutable global initialised to
// zero and exported under GlobalExportPrefix + its index, and no custom
// section but "name"; the State is what an instance of that code must be
// given before it runs (State.Apply's steps: the memory grown to Pages,
// the segments written, the globals set). Two snapshots of one module
// give byte-identical code.
func Split(snap []byte) ([]byte, *State, error) {
	secs, err := Sections(snap)
	if err != nil {
		return nil, nil, err
	}
	if err := snapshotable(secs); err != nil {
		return nil, nil, err
	}
	st := &State{}
	enc := NewEncoder(len(snap))
	var globals []Global
	for _, s := range secs {
		if s.ID == SecGlobal {
			if globals, err = mutableGlobals(s.Body); err != nil {
				return nil, nil, err
			}
		}
	}
	exported := false
	for _, s := range secs {
		switch s.ID {
		case SecCustom:
			r := &Reader{B: s.Body}
			if r.Name() == "name" && r.Err == nil {
				enc.Section(s.ID, s.Body)
			}
		case SecMemory:
			r := &Reader{B: s.Body}
			if n := r.U32(); n != 1 {
				return nil, nil, fmt.Errorf("%w: %d memories", ErrUnsupported, n)
			}
			l := r.Limits()
			if r.Err != nil {
				return nil, nil, r.Err
			}
			st.Pages = uint32(l.Min)
			l.Min = min(l.Min, 1)
			enc.Section(SecMemory, AppendLimits([]byte{1}, l))
		case SecGlobal:
			body, values, err := zeroGlobals(s.Body)
			if err != nil {
				return nil, nil, err
			}
			for i := range globals {
				g := &globals[i]
				g.Export = GlobalExportPrefix + strconv.FormatUint(uint64(g.Index), 10)
				st.Globals = append(st.Globals, GlobalValue{Global: *g, Value: values[g.Index]})
			}
			enc.Section(SecGlobal, body)
		case SecExport:
			r := &Reader{B: s.Body}
			n := r.U32()
			if r.Err != nil {
				return nil, nil, r.Err
			}
			body := AppendU32(nil, n+uint32(len(globals)))
			body = append(body, s.Body[r.I:]...)
			for _, g := range globals {
				body = AppendName(body, GlobalExportPrefix+strconv.FormatUint(uint64(g.Index), 10))
				body = AppendU32(append(body, ImportGlobal), g.Index)
			}
			enc.Section(SecExport, body)
			exported = true
		case SecData:
			if st.Segments, err = activeSegments(s.Body); err != nil {
				return nil, nil, err
			}
			enc.Section(SecData, AppendU32(nil, 0))
		default:
			enc.Section(s.ID, s.Body)
		}
	}
	if !exported && len(globals) > 0 {
		return nil, nil, fmt.Errorf("%w: a snapshot without an export section", ErrUnsupported)
	}
	return enc.Bytes(), st, nil
}

// State is a snapshot's state apart from its code (Split).
type State struct {
	// Pages is the memory's size, in 64 KiB pages.
	Pages uint32
	// Segments are the bytes to write into memory 0, at their offsets.
	Segments []Segment
	// Globals are the mutable globals' values, each by its export.
	Globals []GlobalValue
}

// Segment is bytes at an offset of memory 0.
type Segment struct {
	Offset uint32
	Bytes  []byte
}

// GlobalValue is a mutable global's value, as wazero's api.Global.Get
// returns it (the bits of a float).
type GlobalValue struct {
	Global
	Value uint64
}

// zeroGlobals returns a global section with every mutable global's
// initialiser a zero constant, and the values they had.
func zeroGlobals(b []byte) ([]byte, map[uint32]uint64, error) {
	r := &Reader{B: b}
	n := r.U32()
	out := AppendU32(make([]byte, 0, len(b)), n)
	values := map[uint32]uint64{}
	for i := uint32(0); i < n && r.Err == nil; i++ {
		start := r.I
		t := r.Byte()
		mut := r.Byte()
		exprStart := r.I
		constExpr(r)
		if mut == 0 {
			out = append(out, b[start:r.I]...)
			continue
		}
		v, err := constValue(t, b[exprStart:r.I])
		if err != nil {
			return nil, nil, fmt.Errorf("mutable global %d: %w", i, err)
		}
		values[i] = v
		out = append(out, t, mut)
		switch t {
		case 0x7F:
			out = append(out, 0x41, 0)
		case 0x7E:
			out = append(out, 0x42, 0)
		case 0x7D:
			out = append(out, 0x43, 0, 0, 0, 0)
		case 0x7C:
			out = append(out, 0x44, 0, 0, 0, 0, 0, 0, 0, 0)
		default:
			return nil, nil, fmt.Errorf("%w: mutable global %d of type 0x%02x", ErrUnsupported, i, t)
		}
		out = append(out, 0x0B)
	}
	if r.Err != nil {
		return nil, nil, r.Err
	}
	return out, values, nil
}

// constValue reads a constant expression of one *.const instruction (what
// Snapshot writes).
func constValue(t byte, expr []byte) (uint64, error) {
	r := &Reader{B: expr}
	op := r.Byte()
	var v uint64
	switch {
	case op == 0x41 && t == 0x7F:
		v = uint64(uint32(r.sleb32()))
	case op == 0x42 && t == 0x7E:
		v = uint64(r.sleb64())
	case op == 0x43 && t == 0x7D:
		v = uint64(binary.LittleEndian.Uint32(r.Bytes(4)))
	case op == 0x44 && t == 0x7C:
		v = binary.LittleEndian.Uint64(r.Bytes(8))
	default:
		return 0, fmt.Errorf("%w: an initialiser that is not a constant of its type", ErrUnsupported)
	}
	if r.Byte() != 0x0B || r.Err != nil || !r.Done() {
		return 0, fmt.Errorf("%w: an initialiser that is not one constant", ErrUnsupported)
	}
	return v, nil
}

// activeSegments reads a data section of active segments of memory 0 at
// constant offsets (what Snapshot writes).
func activeSegments(b []byte) ([]Segment, error) {
	r := &Reader{B: b}
	n := r.U32()
	var out []Segment
	for i := uint32(0); i < n && r.Err == nil; i++ {
		flags := r.U32()
		if flags == 2 && r.U32() != 0 {
			flags = 99
		}
		if flags != 0 && flags != 2 {
			return nil, fmt.Errorf("%w: data segment %d is not an active segment of memory 0", ErrUnsupported, i)
		}
		if r.Byte() != 0x41 {
			return nil, fmt.Errorf("%w: data segment %d has no constant offset", ErrUnsupported, i)
		}
		off := uint32(r.sleb32())
		if r.Byte() != 0x0B {
			return nil, fmt.Errorf("%w: data segment %d has no constant offset", ErrUnsupported, i)
		}
		data := r.Bytes(int(r.U32()))
		if r.Err == nil {
			out = append(out, Segment{Offset: off, Bytes: data})
		}
	}
	return out, r.Err
}

// sleb64 reads a signed LEB128 of at most 10 bytes.
func (r *Reader) sleb64() int64 {
	var v int64
	var shift uint
	for i := 0; i < 10; i++ {
		b := r.Byte()
		if r.Err != nil {
			return 0
		}
		v |= int64(b&0x7F) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
	r.Fail("signed LEB128 longer than 10 bytes")
	return 0
}
