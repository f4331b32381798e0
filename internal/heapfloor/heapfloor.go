package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// maxPercent bounds the percentage Start sets: with a live heap of a few
// hundred KiB the headroom alone would ask for tens of thousands.
const maxPercent = 10000

// FromEnvironment reports whether the operator chose the collector's pacing
// with GOGC, in which case Start should not be used.
func FromEnvironment() bool {
	_, set := os.LookupEnv("GOGC")
	return set
}

// Floor is a running heap floor. Its methods are safe for concurrent use.
type Floor struct {
	headroom uint64
	base     int
	stopped  atomic.Bool
	mu       sync.Mutex
	percent  int // the percentage set last
	sample   []metrics.Sample
}

// active is the floor running in this process, if any: the percentage is
// the process's, so one floor sets it at a time.
var active atomic.Pointer[Floor]

// Start keeps at least headroom bytes between the live heap and the next
// collection's goal, from the next collection on, until Stop. The
// percentage never goes below the one in force when Start is called. With
// the collector off (GOGC=off), headroom 0, or another floor running in
// the process, the floor it returns does nothing.
func Start(headroom uint64) *Floor {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	f := &Floor{headroom: headroom, base: base, percent: base,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	if base < 0 || headroom == 0 || !active.CompareAndSwap(nil, f) {
		f.stopped.Store(true)
		return f
	}
	f.adjust()
	f.arm()
	return f
}

// sentinel is garbage whose finalizer runs once per collection cycle: each
// run, while run reports true, re-arms a new one. It holds a pointer so
// that it is a heap object of its own (a pointer-free tiny object can
// share a block and be finalized late).
type sentinel struct{ run func() bool }

// everyCycle calls run after every collection cycle until it returns
// false.
func everyCycle(run func() bool) {
	s := &sentinel{run: run}
	runtime.SetFinalizer(s, func(s *sentinel) {
		if s.run() {
			everyCycle(s.run)
		}
	})
}

func (f *Floor) arm() {
	everyCycle(func() bool {
		if f.stopped.Load() {
			return false
		}
		f.adjust()
		return true
	})
}

// percentFor is the GC percentage that leaves headroom above live, at least
// base and at most maxPercent.
func percentFor(live, headroom uint64, base int) int {
	if live == 0 {
		return maxPercent
	}
	p := headroom * 100 / live
	if p > maxPercent {
		p = maxPercent
	}
	if int(p) < base {
		return base
	}
	return int(p)
}

// adjust sets the percentage for the live heap the last collection left.
// It changes it only when the new value differs by more than an eighth,
// so a live heap that wobbles does not reset the pacer every cycle.
func (f *Floor) adjust() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped.Load() {
		return
	}
	metrics.Read(f.sample)
	if f.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := percentFor(f.sample[0].Value.Uint64(), f.headroom, f.base)
	d := p - f.percent
	if d < 0 {
		d = -d
	}
	if d*8 <= f.percent {
		return
	}
	f.percent = p
	debug.SetGCPercent(p)
}

// Percent is the GC percentage the floor set last (the starting one before
// its first adjustment).
func (f *Floor) Percent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.percent
}

// Stop ends the floor and restores the percentage in force at Start.
func (f *Floor) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped.Swap(true) {
		return
	}
	defer active.CompareAndSwap(f, nil)
	if f.percent != f.base {
		debug.SetGCPercent(f.base)
		f.percent = f.base
	}
}
