package host

import (
	"bytes"
	"runtime"
	"testing"
)

func TestMemClass(t *testing.T) {
	for _, c := range []struct {
		size uint64
		want int
	}{
		{0, 0}, {1, 0}, {65536, 0}, {65537, 1}, {131072, 1}, {131073, 2},
		{1 << 25, maxMemClass - minMemClass}, {1<<25 + 1, -1}, {1 << 32, -1},
	} {
		if got := memClass(c.size); got != c.want {
			t.Errorf("memClass(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}

// A guest's bytes never reach the next instance: everything it could
// write, in the buffers it grew out of as in its last one, is zero when
// the pool hands the buffers out again.
func TestPooledMemoryIsZeroedAndGrows(t *testing.T) {
	for round := 0; round < 50; round++ {
		a := &callMemory{}
		m := a.Allocate(0, 4<<20).(*linearMemory)
		b := m.Reallocate(2 << 16)
		if len(b) != 2<<16 || !allZero(b[:cap(b)]) {
			t.Fatalf("round %d: a new memory is not zero (len %d)", round, len(b))
		}
		fill(b, 0xA5)
		b = m.Reallocate(3 << 16) // grows within the 256 KiB class or moves
		if !bytes.Equal(b[:2<<16], bytes.Repeat([]byte{0xA5}, 2<<16)) || !allZero(b[2<<16:cap(b)]) {
			t.Fatalf("round %d: growth lost the contents or exposed non-zero bytes", round)
		}
		fill(b, 0x5A)
		b = m.Reallocate(1 << 20) // a larger class: a new buffer
		if !bytes.Equal(b[:3<<16], bytes.Repeat([]byte{0x5A}, 3<<16)) || !allZero(b[3<<16:]) {
			t.Fatalf("round %d: growth across classes lost the contents", round)
		}
		fill(b, 0xFF)
		if m.Reallocate(8<<20) != nil {
			t.Fatal("grew past max")
		}
		m.Free() // a no-op: the buffers stay with the call until release
		if !bytes.Equal(b[:16], bytes.Repeat([]byte{0xFF}, 16)) {
			t.Fatal("Free released the buffer while the call holds it")
		}
		a.release()
		if len(a.mems) != 0 {
			t.Fatal("release kept memories")
		}
		// What the pools hand out next is zero, whichever buffer it is.
		for _, size := range []uint64{2 << 16, 3 << 16, 1 << 20} {
			p := getBuf(size)
			if !allZero(p.b[:cap(p.b)]) {
				t.Fatalf("round %d: a pooled buffer of %d bytes held old bytes", round, size)
			}
			putBuf(p)
		}
	}
}

func TestHugeMemoryIsNotPooled(t *testing.T) {
	p := getBuf(1<<25 + 1)
	if p.class != -1 || len(p.b) != 1<<25+1 {
		t.Fatalf("class %d len %d", p.class, len(p.b))
	}
	putBuf(p) // dropped
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// A guest that grows its memory one page at a time past the pooled sizes
// must cost the host O(final size), not a copy per page.
func TestPageByPageGrowthIsGeometric(t *testing.T) {
	const final = 64 << 20
	a := &callMemory{}
	m := a.Allocate(65536, 256<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var b []byte
	for size := uint64(65536); size <= final; size += 65536 {
		b = m.Reallocate(size)
		if uint64(len(b)) != size {
			t.Fatalf("len %d, want %d", len(b), size)
		}
	}
	b[final-1] = 1
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 5*final {
		t.Fatalf("growing to %d MiB page by page allocated %d MiB", final>>20, got>>20)
	}
	a.release()
}

// TestImagePoolDirtyOnlyInItsRanges: a snapshot's memory comes back from
// its image pool zero everywhere but in the ranges its data segments
// write (which wazero overwrites before the guest runs); a buffer it
// outgrew, or one that left the image's class, goes to memPools zeroed
// whole; and nothing dirty ever reaches memPools.
func TestImagePoolDirtyOnlyInItsRanges(t *testing.T) {
	ip := &imagePool{ranges: [][2]uint64{{100, 200}, {5000, 70000}}}
	outside := func(b []byte) bool {
		var prev uint64
		for _, r := range ip.ranges {
			if r[0] >= uint64(len(b)) {
				break
			}
			if !allZero(b[prev:r[0]]) {
				return false
			}
			prev = min(r[1], uint64(len(b)))
		}
		return allZero(b[prev:])
	}
	for round := 0; round < 20; round++ {
		a := &callMemory{image: ip}
		m := a.Allocate(0, 4<<20).(*linearMemory)
		b := m.Reallocate(2 << 16)
		if !outside(b[:cap(b)]) {
			t.Fatalf("round %d: a buffer from the image pool is not zero outside the image", round)
		}
		fill(b, 0xA5)             // wazero's data, then the guest, write everywhere
		b = m.Reallocate(3 << 16) // in place: the same class
		fill(b, 0x5A)
		a.release()
		// Another call of a module without an image gets zeroed memory.
		p := getBuf(3 << 16)
		if !allZero(p.b[:cap(p.b)]) {
			t.Fatalf("round %d: memPools handed out dirty bytes", round)
		}
		putBuf(p)
	}
	// A memory that outgrows its class: both buffers go to memPools, zero.
	a := &callMemory{image: ip}
	m := a.Allocate(0, 4<<20).(*linearMemory)
	fill(m.Reallocate(2<<16), 0xA5)
	fill(m.Reallocate(1<<20), 0x5A)
	a.release()
	for _, size := range []uint64{2 << 16, 1 << 20} {
		for i := 0; i < 4; i++ {
			p := getBuf(size)
			if !allZero(p.b[:cap(p.b)]) {
				t.Fatalf("a buffer of %d bytes from memPools held old bytes", size)
			}
			defer putBuf(p)
		}
	}
	// A kept buffer asked for at another size (never for one code) is
	// zeroed whole and goes to memPools.
	b := &pooledBuf{b: make([]byte, 2<<16, 2<<16), class: memClass(2 << 16)}
	fill(b.b, 0xEE)
	ip.put(b)
	if got := ip.get(1 << 20); got != nil && got.class != memClass(1<<20) {
		t.Fatal("the image pool handed out a buffer of another class")
	}
	for i := 0; i < 4; i++ {
		p := getBuf(2 << 16)
		if !allZero(p.b[:cap(p.b)]) {
			t.Fatal("a buffer refused by the image pool reached memPools dirty")
		}
		defer putBuf(p)
	}
}
