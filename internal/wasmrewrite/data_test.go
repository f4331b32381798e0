package wasmrewrite

import (
	"context"
	"reflect"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// dataModule is a module with one memory of two pages, exported, and the
// data section given.
func dataModule(data []byte) []byte {
	w := []byte(Header)
	w = append(w, section(SecMemory, 1, 0, 2)...)
	w = append(w, section(SecExport, append(AppendName([]byte{1}, "memory"), ImportMemory, 0)...)...)
	w = append(w, section(SecDataCount, 5)...)
	return append(w, section(SecData, data...)...)
}

// segment encodes an active segment of memory 0 at off (flags 0, or 2
// with an explicit memory index).
func segment(flags byte, off int32, b ...byte) []byte {
	s := []byte{flags}
	if flags == 2 {
		s = append(s, 0)
	}
	s = AppendS32(append(s, 0x41), off)
	s = append(s, 0x0B)
	return append(AppendU32(s, uint32(len(b))), b...)
}

// dirtyAllocator hands wazero memories filled with 0xAA, so the test sees
// which bytes instantiation wrote.
type dirtyAllocator struct{ mem []byte }

func (d *dirtyAllocator) Allocate(min, max uint64) experimental.LinearMemory { return d }
func (d *dirtyAllocator) Reallocate(size uint64) []byte {
	if uint64(len(d.mem)) < size {
		d.mem = make([]byte, size)
		for i := range d.mem {
			d.mem[i] = 0xAA
		}
	}
	return d.mem[:size]
}
func (d *dirtyAllocator) Free() {}

// TestDataRangesAreWhatInstantiationWrites: the ranges DataRanges lists
// are exactly the bytes wazero writes when it instantiates the module —
// zeros inside a segment included, overlapping and adjacent segments
// merged, a passive segment not — checked against wazero itself on a
// memory that starts out dirty.
func TestDataRangesAreWhatInstantiationWrites(t *testing.T) {
	data := []byte{5}
	data = append(data, segment(0, 100, 1, 0, 0, 2)...)   // zeros inside count
	data = append(data, segment(2, 102, 7, 7, 7, 7)...)   // overlaps the first
	data = append(data, segment(0, 106, 9)...)            // adjacent: merged
	data = append(data, 1, 3, 'p', 'a', 's')              // passive: nothing at instantiation
	data = append(data, segment(0, 70000, 4, 0, 4, 0)...) // second page
	ranges, ok, err := DataRanges(dataModule(data))
	if err != nil || !ok {
		t.Fatalf("DataRanges: %v %v", ok, err)
	}
	want := [][2]uint64{{100, 107}, {70000, 70004}}
	if !reflect.DeepEqual(ranges, want) {
		t.Fatalf("ranges %v, want %v", ranges, want)
	}
	ctx := context.Background()
	d := &dirtyAllocator{}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.Instantiate(experimental.WithMemoryAllocator(ctx, d), dataModule(data)); err != nil {
		t.Fatal(err)
	}
	in := func(i uint64) bool {
		for _, r := range ranges {
			if i >= r[0] && i < r[1] {
				return true
			}
		}
		return false
	}
	for i, b := range d.mem {
		if written := b != 0xAA; written != in(uint64(i)) {
			t.Fatalf("byte %d is %#x: written %v, but DataRanges says %v", i, b, written, in(uint64(i)))
		}
	}
}

func TestDataRangesUnknown(t *testing.T) {
	// An offset from a global is known only at instantiation.
	global := []byte{1, 0, 0x23, 0, 0x0B, 1, 1}
	if _, ok, err := DataRanges(dataModule(global)); ok || err != nil {
		t.Fatalf("a global.get offset: ok %v err %v, want not ok", ok, err)
	}
	// Another memory.
	other := []byte{1, 2, 1, 0x41, 0, 0x0B, 1, 1}
	if _, ok, err := DataRanges(dataModule(other)); ok || err != nil {
		t.Fatalf("memory 1: ok %v err %v, want not ok", ok, err)
	}
	// A cut section.
	if _, _, err := DataRanges(dataModule([]byte{1, 0, 0x41})); err == nil {
		t.Fatal("a truncated segment read")
	}
	// No data section at all: nothing is written.
	if r, ok, err := DataRanges(dataModule(nil)[:len(dataModule(nil))-2]); !ok || err != nil || len(r) != 0 {
		t.Fatalf("no data: %v %v %v", r, ok, err)
	}
	// A negative i32.const offset is an unsigned address.
	if r, ok, _ := DataRanges(dataModule(append([]byte{1}, segment(0, -4, 1)...))); !ok || r[0][0] != 1<<32-4 {
		t.Fatalf("offset -4: %v", r)
	}
}

// instantiateDirty instantiates wasm on a memory filled with 0xAA and
// returns that memory (whatever instantiation wrote) and its error.
func instantiateDirty(t *testing.T, wasm []byte) ([]byte, error) {
	t.Helper()
	ctx := context.Background()
	d := &dirtyAllocator{}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	_, err := rt.Instantiate(experimental.WithMemoryAllocator(ctx, d), wasm)
	return d.mem, err
}

// TestDataRangesOddEncodingsAndPartialFailure: an author's module may
// encode its data section in ways wazero accepts but a writer would not
// (LEB128 padded to five bytes, a last byte with bits wazero does not
// check, a zero-length segment at the memory's end, a segment inside
// another): DataRanges must read them as wazero does, or a byte it lists
// as rewritten at instantiation would keep the previous call's value.
// And a segment out of bounds stops instantiation after the earlier ones
// were written: what was written is still inside the ranges, and no
// instance exists to read the rest (the segments are constants and the
// memory's initial size fixed, so that code never instantiates).
func TestDataRangesOddEncodingsAndPartialFailure(t *testing.T) {
	module := func(segs ...[]byte) []byte {
		data := []byte{0x80 | byte(len(segs)), 0x80, 0} // the count, padded
		for _, s := range segs {
			data = append(data, s...)
		}
		w := []byte(Header)
		w = append(w, section(SecMemory, 1, 0, 2)...)
		w = append(w, section(SecExport, append(AppendName([]byte{1}, "memory"), ImportMemory, 0)...)...)
		w = append(w, section(SecDataCount, byte(len(segs)))...)
		return append(w, section(SecData, data...)...)
	}
	raw := func(b ...byte) []byte { return b }
	ok := module(
		raw(0x80, 0x00, 0x41, 0xC8, 0x81, 0x80, 0x80, 0x00, 0x0B, 2, 1, 2), // flags 0 padded; offset 200 in five bytes
		raw(0x02, 0x80, 0x80, 0x00, 0x41, 0xAC, 0x82, 0x80, 0x80, 0x40, 0x0B, // memory 0 padded; offset 300, bit 0x40 of the last byte unchecked
			0x83, 0x80, 0x80, 0x80, 0x00, 9, 9, 9), // size 3 in five bytes
		segment(0, 1<<17),           // zero-length at the end of memory: in bounds, writes nothing
		segment(0, 400, 0, 0, 0, 0), // zeros
		segment(0, 401, 5),          // inside the previous one
	)
	ranges, rok, err := DataRanges(ok)
	if err != nil || !rok {
		t.Fatalf("DataRanges: %v %v", rok, err)
	}
	if want := [][2]uint64{{200, 202}, {300, 303}, {400, 404}}; !reflect.DeepEqual(ranges, want) {
		t.Fatalf("ranges %v, want %v", ranges, want)
	}
	mem, err := instantiateDirty(t, ok)
	if err != nil {
		t.Fatalf("wazero refused the module: %v", err)
	}
	for i, b := range mem {
		if written := b != 0xAA; written != inRanges(ranges, uint64(i)) {
			t.Fatalf("byte %d is %#x: written %v, but DataRanges says %v", i, b, written, !written)
		}
	}

	// The second segment straddles the end of memory: wazero wrote the
	// first, then failed.
	bad := module(segment(0, 500, 1, 2, 3, 4), segment(0, 1<<17-2, 7, 7, 7, 7), segment(0, 600, 8))
	ranges, rok, err = DataRanges(bad)
	if err != nil || !rok {
		t.Fatalf("DataRanges: %v %v", rok, err)
	}
	for i := 0; i < 3; i++ {
		mem, err := instantiateDirty(t, bad)
		if err == nil {
			t.Fatal("a segment past the memory's end instantiated")
		}
		for j, b := range mem {
			if b != 0xAA && !inRanges(ranges, uint64(j)) {
				t.Fatalf("a failed instantiation wrote byte %d, outside the ranges %v", j, ranges)
			}
		}
		if mem[500] == 0xAA || mem[600] != 0xAA {
			t.Fatalf("wazero no longer stops at the failing segment (mem[500]=%#x mem[600]=%#x): review imagePool", mem[500], mem[600])
		}
	}
}

func inRanges(ranges [][2]uint64, i uint64) bool {
	for _, r := range ranges {
		if i >= r[0] && i < r[1] {
			return true
		}
	}
	return false
}

// TestSnapshotDataRangesBounded: a start-up that leaves a non-zero byte
// every 520 bytes (past SegmentGap) over 10 MiB would make 20,000
// segments, and 20,000 ranges for imagePool to walk at every call's end;
// Snapshot widens the gap until there are at most maxSegments, and the
// snapshot's ranges are still exactly what wazero writes.
func TestSnapshotDataRangesBounded(t *testing.T) {
	img := Image{Memory: make([]byte, 160<<16), Drop: []string{"_initialize"},
		Globals: map[uint32]uint64{1: 0, 2: 0, 3: 0, 4: 0}}
	n := 0
	for i := 7; i < len(img.Memory); i += SegmentGap + 8 {
		img.Memory[i] = 1
		n++
	}
	img.Memory[len(img.Memory)-1] = 2
	const bound = 10_000 // docs/security.md
	if n <= bound {
		t.Fatalf("only %d runs: the test needs more than %d", n, bound)
	}
	snap, err := Snapshot(initModule(), img)
	if err != nil {
		t.Fatal(err)
	}
	ranges, ok, err := DataRanges(snap)
	if err != nil || !ok {
		t.Fatalf("DataRanges: %v %v", ok, err)
	}
	if len(ranges) == 0 || len(ranges) > bound {
		t.Fatalf("%d ranges for %d runs, want 1..%d", len(ranges), n, bound)
	}
	mem, err := instantiateDirty(t, snap)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range mem {
		if written := b != 0xAA; written != inRanges(ranges, uint64(i)) {
			t.Fatalf("byte %d is %#x: written %v, but DataRanges says %v", i, b, written, !written)
		}
		if img.Memory[i] != 0 && !inRanges(ranges, uint64(i)) {
			t.Fatalf("non-zero byte %d of the image outside the ranges", i)
		}
	}
}
