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

// callMemory is the memory allocator of one call's instance. It implements
// experimental.MemoryAllocator. It also keeps the call's share of the
// engine's memory budget: the buffers its memories hold are charged to it
// as they are allocated, and a growth the budget cannot cover is refused
// (memory.grow fails in the guest) and recorded for the call's error.
type callMemory struct {
	mems []*linearMemory

	budget *memBudget
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
			putBuf(p)
		}
		m.bufs, m.cur = nil, nil
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
}

// Reallocate implements experimental.LinearMemory: it grows the memory to
// size bytes, in place when the buffer's capacity allows (those bytes are
// zero), else into a buffer of the next class.
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
		if !m.a.pay(1<<(minMemClass+c), size, force) {
			return nil
		}
		p = getBuf(size)
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
	m.cur = p
	m.bufs = append(m.bufs, p)
	return p.b
}

// Free implements experimental.LinearMemory. The buffers go back to the
// pools in callMemory.release, when the call is over.
func (m *linearMemory) Free() {}
