package wasmrewrite

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Snapshotting (Wizer's idea, done by the host) turns an instance's state
// after its start-up code into a module's initial state, in two passes:
//
//   - ExportGlobals makes every mutable global a module defines readable
//     from outside (an export named GlobalExportPrefix + its index), so
//     the host can instantiate that module, run its start-up code and read
//     the globals and the linear memory;
//   - Snapshot writes the original module again with that state as its
//     initial state: one data segment per run of non-zero bytes of the
//     memory image (close runs merged), the memory's minimum at the
//     image's size, each mutable global initialised with its recorded
//     value, and the start section and the exports named in Image.Drop
//     (the start-up code) gone.
//
// A module whose state cannot be captured this way is refused with an
// error wrapping ErrUnsupported: an imported memory or mutable global, a
// mutable global of a reference or vector type, a data count section
// (code that names data segments, which the snapshot replaces), or code
// that changes a table (table.set, table.grow, table.fill, table.copy,
// table.init, elem.drop: tables are not part of the image).

// GlobalExportPrefix starts the names ExportGlobals gives the globals it
// exports; the global's index follows in decimal.
const GlobalExportPrefix = "wasmcp.snapshot.global."

// Global is a mutable global a module defines.
type Global struct {
	// Index is the global's index in the module's global index space.
	Index uint32
	// Type is its value type (0x7F i32, 0x7E i64, 0x7D f32, 0x7C f64).
	Type byte
	// Export is the name ExportGlobals exported it under.
	Export string
}

// Image is an instance's state to make a module's initial state.
type Image struct {
	// Memory is the whole linear memory (a multiple of 64 KiB).
	Memory []byte
	// Globals holds the value of each mutable global, by index, as
	// wazero's api.Global.Get returns it (the bits of a float).
	Globals map[uint32]uint64
	// Drop names exports the snapshot no longer has (the start-up code).
	Drop []string
	// Custom sections are appended to the snapshot.
	Custom []Section
}

// ExportGlobals returns wasm with every mutable global it defines exported
// under GlobalExportPrefix + its index, and those globals. It refuses a
// module it could not snapshot (see the package's snapshot notes), so
// that the host finds out before it runs anything.
func ExportGlobals(wasm []byte) ([]byte, []Global, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, nil, err
	}
	if err := snapshotable(secs); err != nil {
		return nil, nil, err
	}
	var globals []Global
	for _, s := range secs {
		if s.ID == SecGlobal {
			if globals, err = mutableGlobals(s.Body); err != nil {
				return nil, nil, err
			}
		}
	}
	var entries []byte
	for i := range globals {
		g := &globals[i]
		g.Export = GlobalExportPrefix + strconv.FormatUint(uint64(g.Index), 10)
		entries = AppendName(entries, g.Export)
		entries = AppendU32(append(entries, ImportGlobal), g.Index)
	}
	enc := NewEncoder(len(wasm) + len(entries) + 16)
	done := len(globals) == 0
	for _, s := range secs {
		if !done && s.ID != SecCustom && before(SecExport, s.ID) {
			enc.Section(SecExport, append(AppendU32(nil, uint32(len(globals))), entries...))
			done = true
		}
		if s.ID == SecExport && !done {
			r := &Reader{B: s.Body}
			n := r.U32()
			if r.Err != nil {
				return nil, nil, r.Err
			}
			body := AppendU32(nil, n+uint32(len(globals)))
			body = append(append(body, s.Body[r.I:]...), entries...)
			enc.Section(SecExport, body)
			done = true
			continue
		}
		enc.Section(s.ID, s.Body)
	}
	if !done {
		enc.Section(SecExport, append(AppendU32(nil, uint32(len(globals))), entries...))
	}
	return enc.Bytes(), globals, nil
}

// snapshotable refuses a module whose state an Image cannot hold.
func snapshotable(secs []Section) error {
	hasMemory := false
	for _, s := range secs {
		switch s.ID {
		case SecImport:
			imps, err := readImports(s.Body)
			if err != nil {
				return err
			}
			for _, im := range imps {
				switch im.Kind {
				case ImportMemory:
					return fmt.Errorf("%w: it imports its memory", ErrUnsupported)
				case ImportGlobal, ImportTable:
					// An imported global could be mutable (its value
					// is not the module's to record) and imported
					// globals shift the indices of defined ones.
					return fmt.Errorf("%w: it imports a global or a table", ErrUnsupported)
				}
			}
		case SecMemory:
			r := &Reader{B: s.Body}
			hasMemory = r.U32() > 0
		case SecDataCount:
			return fmt.Errorf("%w: its code names data segments (data count section)", ErrUnsupported)
		case SecCode:
			if err := noTableWrites(s.Body); err != nil {
				return err
			}
		}
	}
	if !hasMemory {
		return fmt.Errorf("%w: it has no memory", ErrUnsupported)
	}
	return nil
}

// noTableWrites refuses code that changes a table or drops an element
// segment.
func noTableWrites(b []byte) error {
	r := &Reader{B: b}
	n := r.U32()
	for i := uint32(0); i < n && r.Err == nil; i++ {
		fn := &Reader{B: r.Bytes(int(r.U32()))}
		if r.Err != nil {
			break
		}
		fn.Locals()
		for !fn.Done() {
			op, sub := fn.Instr()
			if fn.Err != nil {
				return fn.Err
			}
			if op == 0x26 || (op == 0xFC && (sub >= 12 && sub <= 15 || sub == 17)) {
				return fmt.Errorf("%w: function %d changes a table at run time", ErrUnsupported, i)
			}
		}
	}
	return r.Err
}

// mutableGlobals reads a global section and returns its mutable globals
// (defined globals only: snapshotable refuses imported ones, so the
// indices start at 0).
func mutableGlobals(b []byte) ([]Global, error) {
	r := &Reader{B: b}
	n := r.U32()
	var out []Global
	for i := uint32(0); i < n && r.Err == nil; i++ {
		t := r.Byte()
		mut := r.Byte()
		constExpr(r)
		if mut == 0 {
			continue
		}
		switch t {
		case 0x7F, 0x7E, 0x7D, 0x7C:
		default:
			return nil, fmt.Errorf("%w: mutable global %d of type 0x%02x", ErrUnsupported, i, t)
		}
		out = append(out, Global{Index: i, Type: t})
	}
	return out, r.Err
}

// SegmentGap is the longest run of zero bytes Snapshot keeps inside one
// data segment rather than starting a new one: a segment costs its header
// in the binary and a step of the engine's instantiation loop, about what
// copying a few hundred bytes costs.
const SegmentGap = 512

// maxSegments bounds the data segments of a snapshot (the gap doubles
// until the image fits), well under the caps engines put on them.
const maxSegments = 10_000

// Snapshot rewrites wasm (the module ExportGlobals was given, not its
// result) with img as its initial state. The memory image must be at
// least the module's declared minimum and a multiple of 64 KiB.
func Snapshot(wasm []byte, img Image) ([]byte, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, err
	}
	if err := snapshotable(secs); err != nil {
		return nil, err
	}
	if len(img.Memory)%65536 != 0 {
		return nil, fmt.Errorf("%w: memory image of %d bytes is not whole pages", ErrUnsupported, len(img.Memory))
	}
	pages := uint64(len(img.Memory) / 65536)
	drop := map[string]bool{}
	for _, d := range img.Drop {
		drop[d] = true
	}
	enc := NewEncoder(len(wasm) + len(img.Memory))
	wroteData := false
	for _, s := range secs {
		if !wroteData && s.ID != SecCustom && before(SecData, s.ID) {
			enc.Section(SecData, dataSection(img.Memory))
			wroteData = true
		}
		switch s.ID {
		case SecStart:
			// its effects are in the image
		case SecMemory:
			body, err := memorySection(s.Body, pages)
			if err != nil {
				return nil, err
			}
			enc.Section(SecMemory, body)
		case SecGlobal:
			body, err := globalSection(s.Body, img.Globals)
			if err != nil {
				return nil, err
			}
			enc.Section(SecGlobal, body)
		case SecExport:
			body, err := dropExports(s.Body, drop)
			if err != nil {
				return nil, err
			}
			enc.Section(SecExport, body)
		case SecData:
			enc.Section(SecData, dataSection(img.Memory))
			wroteData = true
		default:
			enc.Section(s.ID, s.Body)
		}
	}
	if !wroteData {
		enc.Section(SecData, dataSection(img.Memory))
	}
	for _, c := range img.Custom {
		enc.Section(SecCustom, c.Body)
	}
	return enc.Bytes(), nil
}

// CustomSection is the body of a custom section of that name.
func CustomSection(name string, data []byte) Section {
	return Section{ID: SecCustom, Body: append(AppendName(nil, name), data...)}
}

// memorySection sets the minimum of the module's one memory.
func memorySection(b []byte, pages uint64) ([]byte, error) {
	r := &Reader{B: b}
	if n := r.U32(); n != 1 {
		r.Fail(fmt.Sprintf("%d memories", n))
	}
	l := r.Limits()
	if r.Err != nil {
		return nil, r.Err
	}
	if pages < l.Min || (l.HasMax && pages > l.Max) {
		return nil, fmt.Errorf("%w: memory image of %d pages outside the memory's limits", ErrUnsupported, pages)
	}
	l.Min = pages
	return AppendLimits([]byte{1}, l), nil
}

// globalSection replaces each mutable global's initialiser with its value.
func globalSection(b []byte, values map[uint32]uint64) ([]byte, error) {
	r := &Reader{B: b}
	n := r.U32()
	out := AppendU32(make([]byte, 0, len(b)+int(n)*8), n)
	for i := uint32(0); i < n && r.Err == nil; i++ {
		start := r.I
		t := r.Byte()
		mut := r.Byte()
		constExpr(r)
		if mut == 0 {
			out = append(out, b[start:r.I]...)
			continue
		}
		v, ok := values[i]
		if !ok {
			return nil, fmt.Errorf("%w: no value recorded for mutable global %d", ErrUnsupported, i)
		}
		out = append(out, t, mut)
		switch t {
		case 0x7F:
			out = AppendS32(append(out, 0x41), int32(uint32(v)))
		case 0x7E:
			out = AppendS64(append(out, 0x42), int64(v))
		case 0x7D:
			out = binary.LittleEndian.AppendUint32(append(out, 0x43), uint32(v))
		case 0x7C:
			out = binary.LittleEndian.AppendUint64(append(out, 0x44), v)
		default:
			return nil, fmt.Errorf("%w: mutable global %d of type 0x%02x", ErrUnsupported, i, t)
		}
		out = append(out, 0x0B)
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return out, nil
}

// dropExports removes the named exports from an export section.
func dropExports(b []byte, drop map[string]bool) ([]byte, error) {
	r := &Reader{B: b}
	n := r.U32()
	var kept []byte
	var k uint32
	for i := uint32(0); i < n && r.Err == nil; i++ {
		start := r.I
		name := r.Name()
		r.Byte()
		r.U32()
		if !drop[name] {
			kept = append(kept, b[start:r.I]...)
			k++
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return append(AppendU32(nil, k), kept...), nil
}

// dataSection encodes the non-zero runs of mem as active segments of
// memory 0, merging runs separated by fewer than the gap's zero bytes.
func dataSection(mem []byte) []byte {
	gap := SegmentGap
	var runs [][2]int
	for {
		runs = nonZeroRuns(mem, gap, runs[:0])
		if len(runs) <= maxSegments {
			break
		}
		gap *= 2
	}
	size := 5
	for _, r := range runs {
		size += 16 + r[1] - r[0]
	}
	out := AppendU32(make([]byte, 0, size), uint32(len(runs)))
	for _, r := range runs {
		out = append(out, 0x00, 0x41) // active, memory 0; i32.const offset
		out = AppendS32(out, int32(uint32(r[0])))
		out = append(out, 0x0B)
		out = AppendU32(out, uint32(r[1]-r[0]))
		out = append(out, mem[r[0]:r[1]]...)
	}
	return out
}

// nonZeroRuns appends to runs the [start, end) ranges of mem's non-zero
// bytes, merging two when fewer than gap zero bytes separate them.
func nonZeroRuns(mem []byte, gap int, runs [][2]int) [][2]int {
	i := 0
	for {
		for i+8 <= len(mem) && binary.LittleEndian.Uint64(mem[i:]) == 0 {
			i += 8
		}
		for i < len(mem) && mem[i] == 0 {
			i++
		}
		if i >= len(mem) {
			return runs
		}
		start := i
		for i < len(mem) && mem[i] != 0 {
			i++
		}
		if n := len(runs); n > 0 && start-runs[n-1][1] < gap {
			runs[n-1][1] = i
		} else {
			runs = append(runs, [2]int{start, i})
		}
	}
}

// AppendS64 appends v as signed LEB128.
func AppendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// Exports lists the names a module exports, by kind (ImportFunc,
// ImportGlobal, …).
func Exports(wasm []byte) (map[string]byte, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, err
	}
	out := map[string]byte{}
	for _, s := range secs {
		if s.ID != SecExport {
			continue
		}
		r := &Reader{B: s.Body}
		for n := r.U32(); n > 0 && r.Err == nil; n-- {
			name := r.Name()
			kind := r.Byte()
			r.U32()
			out[name] = kind
		}
		if r.Err != nil {
			return nil, r.Err
		}
	}
	return out, nil
}
