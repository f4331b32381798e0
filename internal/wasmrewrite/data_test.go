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
