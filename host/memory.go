package host

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// Linear memories are recycled: each call gets its instance's memory from
// a pool of zeroed buffers and, once the instance has stopped and been
// closed, zeroes what the guest used and returns it. Only the bytes are
// reused, never an instance, and a buffer is zero before anyone sees it
// again, so instances stay as isolated as with fresh allocations. Without
// the pool every instance allocated (and the Go runtime zeroed, then
// collected) at least its initial memory; for a C guest that was the
// largest single cost of instantiation.

const (
	minMemClass = 16 // 64 KiB, one page
	maxMemClass = 25 // 32 MiB; larger memories are allocated and dropped
)

// memPools[k] holds zeroed buffers of capacity 1<<(minMemClass+k).
var memPools [maxMemClass - minMemClass + 1]sync.Pool

// pooledBuf is a buffer taken from memPools (a pointer, so that putting it
// back allocates nothing).
type pooledBuf struct {
	b     []byte
	class int // -1: not pooled
}

// memClass is the pool index for a buffer of at least size bytes, or -1.
func memClass(size uint64) int {
	if size <= 1<<minMemClass {
		return 0
	}
	c := bits.Len64(size-1) - minMemClass
	if c >= len(memPools) {
		return -1
	}
	return c
}

// getBuf returns a zeroed buffer of length size.
func getBuf(size uint64) *pooledBuf {
	c := memClass(size)
	if c < 0 {
		return &pooledBuf{b: make([]byte, size), class: -1}
	}
	if p, ok := memPools[c].Get().(*pooledBuf); ok {
		p.b = p.b[:size]
		return p
	}
	return &pooledBuf{b: make([]byte, size, 1<<(minMemClass+c)), class: c}
}

// putBuf zeroes the part of a buffer a guest could have written (its
// length: memory only grows, and bytes past the length were never exposed)
// and pools it.
func putBuf(p *pooledBuf) {
	if p.class < 0 {
		return
	}
	clear(p.b)
	p.b = p.b[:0]
	memPools[p.class].Put(p)
}

// imagePool keeps the linear memories of one snapshot module's calls
// between calls. A snapshot's memory image is most of its initial memory
// (megabytes for a Go reactor or a script's runner), and wazero writes it
// again, from the module's data segments, into every new instance's memory
// before the instance runs. So a memory returned here is zeroed everywhere
// but in the bytes those segments write: the next instance of the same
// code gets it with those bytes as the last call left them, and wazero
// overwrites exactly them (wasmrewrite.DataRanges lists them, and its test
// checks the list against wazero) before any guest code runs. A guest thus
// sees what a fresh memory would hold, and the call saves zeroing the
// image only to have it copied over. Only the code these ranges were read
// from takes buffers from its pool; any other buffer goes to memPools,
// zeroed whole. Like memPools, what the pools keep between calls is not
// charged to the memory budget (which counts the memories of calls
// running); sync.Pool gives it back to the collector within two cycles
// of not being used.
type imagePool struct {
	ranges [][2]uint64 // sorted, disjoint [start, end) of memory 0
	pool   sync.Pool   // *pooledBuf, zero outside ranges
	// size, for a split snapshot (snapshot.state), is the size its memory
	// grows to before the guest runs: buffers are taken at that size and
	// handed out shorter, so the growth only reslices.
	size uint64
}

// get returns a buffer for a memory of size bytes, zero outside the
// ranges, or nil.
func (ip *imagePool) get(size uint64) *pooledBuf {
	want := max(size, ip.size)
	p, _ := ip.pool.Get().(*pooledBuf)
	if p == nil {
		if ip.size <= size {
			return nil
		}
		if p = getBuf(want); p == nil {
			return nil
		}
		p.b = p.b[:size]
		return p
	}
	if p.class != memClass(want) {
		// Another initial size than the one it was kept for: never for
		// one code, but keep the invariant of memPools if it happens.
		ip.clearRanges(p.b[:cap(p.b)])
		p.b = p.b[:0]
		memPools[p.class].Put(p)
		return nil
	}
	p.b = p.b[:size]
	return p
}

// put zeroes b outside the ranges and keeps it.
func (ip *imagePool) put(p *pooledBuf) {
	b := p.b
	var prev uint64
	for _, r := range ip.ranges {
		if r[0] >= uint64(len(b)) {
			break
		}
		clear(b[prev:r[0]])
		prev = min(r[1], uint64(len(b)))
	}
	if prev < uint64(len(b)) {
		clear(b[prev:])
	}
	p.b = p.b[:0]
	ip.pool.Put(p)
}

// clearRanges zeroes b inside the ranges.
func (ip *imagePool) clearRanges(b []byte) {
	for _, r := range ip.ranges {
		if r[0] >= uint64(len(b)) {
			break
		}
		clear(b[r[0]:min(r[1], uint64(len(b)))])
	}
}

// callMemory is the memory allocator of one call's instance. It implements
// experimental.MemoryAllocator. It also keeps the call's share of the
// engine's memory budget: the buffers its memories hold are charged to it
// as they are allocated, and a growth the budget cannot cover is refused
// (memory.grow fails in the guest) and recorded for the call's error.
type callMemory struct {
	mems []*linearMemory

	budget *memBudget
	// image, for a snapshot module, is where its first memory comes from
	// and goes back to (imagePool); nil: memPools only.
	image  *imagePool
	charge memCharge
	paid   int64 // bytes of buffers charged (admission's initial memory, then growth)
	held   int64 // bytes of buffers held
	// refused, when a growth was refused: why, the size asked for, and
	// whether it could fit once other calls end.
	refused      string
	refusedSize  uint64
	refusedLater bool
}

// Allocate implements experimental.MemoryAllocator.
func (a *callMemory) Allocate(_, max uint64) experimental.LinearMemory {
	m := &linearMemory{max: max, a: a}
	if len(a.mems) == 0 {
		m.image = a.image // memory 0, the one data segments write
	}
	a.mems = append(a.mems, m)
	return m
}

// pay charges a new buffer of n bytes. The first buffer of a memory (its
// initial size, reserved at admission) is never refused: wazero cannot
// fail an instantiation on it.
func (a *callMemory) pay(n uint64, size uint64, force bool) bool {
	held := a.held + int64(n)
	if held > a.paid && a.budget != nil {
		extra := held - a.paid
		if force {
			a.budget.force(&a.charge, extra)
		} else if why, later := a.budget.grow(&a.charge, extra); why != "" {
			if a.refused == "" {
				a.refused, a.refusedSize, a.refusedLater = why, size, later
			}
			return false
		}
		a.paid = held
	}
	a.held = held
	return true
}

// budgetError is the call's error when its memory could not grow for want
// of budget, or nil.
func (a *callMemory) budgetError(module string) *GuestError {
	if a.refused == "" {
		return nil
	}
	ge := &GuestError{Module: module, Kind: KindLimit,
		Msg: fmt.Sprintf("its memory could not grow to %s: %s (--memory-budget)", FormatBytes(int64(a.refusedSize)), a.refused)}
	if a.refusedLater {
		ge.Err = errMemoryBudget
	}
	return ge
}

// release returns every buffer of the call to the pools. It must be called
// only once the instance can no longer run (its call has returned): wazero
// may call Free earlier, e.g. when the engine closes under a running call,
// so buffers are not returned from Free.
func (a *callMemory) release() {
	for _, m := range a.mems {
		for _, p := range m.bufs {
			if p == m.cur && m.image != nil && p.class >= 0 && p.class == m.class {
				m.image.put(p)
				continue
			}
			if m.image != nil && p == m.first {
				// Outgrown: it may hold the image; zero it whole.
				p.b = p.b[:cap(p.b)]
			}
			putBuf(p)
		}
		m.bufs, m.cur, m.first = nil, nil, nil
	}
	a.mems = a.mems[:0]
}

// linearMemory is one instance's memory: the current buffer and the ones
// it outgrew (kept until release, as nothing may reuse them while the
// instance lives).
type linearMemory struct {
	a    *callMemory
	max  uint64
	cur  *pooledBuf
	bufs []*pooledBuf
	// image is the snapshot's pool of memory 0 (callMemory.image), and
	// first and class the buffer the memory started with and its class:
	// only a buffer of that class, the memory's current one, goes back
	// to the image pool.
	image *imagePool
	first *pooledBuf
	class int
}

// Reallocate implements experimental.LinearMemory: it grows the memory to
// size bytes, in place when the buffer's capacity allows (those bytes are
// zero, but for a split snapshot's image ranges, which applyState writes
// before the guest runs), else into a buffer of the next class.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if m.cur != nil && size <= uint64(cap(m.cur.b)) {
		m.cur.b = m.cur.b[:size]
		return m.cur.b
	}
	force := m.cur == nil
	var p *pooledBuf
	if c := memClass(size); c >= 0 {
		if m.cur == nil && m.image != nil && m.image.size > size {
			// A split snapshot's memory: its buffer is taken at the
			// size the image grows it to, and paid for now.
			c = memClass(m.image.size)
		}
		if !m.a.pay(1<<(minMemClass+c), size, force) {
			return nil
		}
		if m.cur == nil && m.image != nil {
			p = m.image.get(size)
		}
		if p == nil {
			p = getBuf(size)
		}
	} else {
		// Past the pooled sizes, grow geometrically (bounded by the
		// cap) so a guest growing page by page costs O(final size) in
		// copies and garbage, not O(size²); without room in the budget
		// for that, to size only.
		c := size
		if m.cur != nil {
			c = max(c, 2*uint64(cap(m.cur.b)))
		}
		c = min(c, m.max)
		if !m.a.pay(c, size, force) {
			if c == size || !m.a.pay(size, size, force) {
				return nil
			}
			c = size
		}
		p = &pooledBuf{b: make([]byte, size, c), class: -1}
	}
	if m.cur != nil {
		copy(p.b, m.cur.b)
		if m.cur.class < 0 {
			// An unpooled buffer goes to no pool: drop it now so the
			// collector can take it while the instance still runs.
			m.bufs = m.bufs[:len(m.bufs)-1]
			m.a.held -= int64(cap(m.cur.b))
		}
	}
	if m.cur == nil {
		m.first, m.class = p, p.class
	}
	m.cur = p
	m.bufs = append(m.bufs, p)
	return p.b
}

// Free implements experimental.LinearMemory. The buffers go back to the
// pools in callMemory.release, when the call is over.
func (m *linearMemory) Free() {}
