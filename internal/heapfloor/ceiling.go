package heapfloor

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// CeilingFromEnvironment reports whether the operator chose the memory
// limit with GOMEMLIMIT, in which case StartCeiling should not be used.
func CeilingFromEnvironment() bool {
	_, set := os.LookupEnv("GOMEMLIMIT")
	return set
}

// Ceiling keeps the runtime's soft memory limit (debug.SetMemoryLimit) at
// what the process is meant to hold: with the default GOGC the heap may
// grow to twice its live size between collections, so a server whose
// budgets hold its live heap to some bound could still reach twice it.
// After every collection the limit is set to the target the caller gives
// (what its budgets allow now, plus a margin), and never below the live
// heap plus a least room, so that the collector is not made to run back
// to back when something outside the budgets is live: the limit then
// follows the heap instead of bounding it.
type Ceiling struct {
	target  func() int64 // the limit wanted now; <= 0: none
	room    uint64
	before  int64 // the limit in force at start, restored by Stop
	stopped atomic.Bool
	mu      sync.Mutex
	limit   int64 // set last
	sample  []metrics.Sample
}

// activeCeiling is the ceiling running in this process, if any: the
// limit is the process's, so one ceiling sets it at a time.
var activeCeiling atomic.Pointer[Ceiling]

// StartCeiling sets the memory limit to target() (at least the live heap
// plus room) now and after every collection, until Stop. With another
// ceiling running in the process, the ceiling it returns does nothing.
func StartCeiling(target func() int64, room uint64) *Ceiling {
	c := &Ceiling{target: target, room: room, before: debug.SetMemoryLimit(-1),
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	c.limit = c.before
	if !activeCeiling.CompareAndSwap(nil, c) {
		c.stopped.Store(true)
		return c
	}
	c.adjust()
	everyCycle(func() bool {
		if c.stopped.Load() {
			return false
		}
		c.adjust()
		return true
	})
	return c
}

// limitFor is the memory limit for a target and the live heap: the
// target (none when <= 0), at least live plus room or a quarter of live,
// whichever is more. A fixed room alone would, past the target, make the
// collector mark the whole live heap every room bytes allocated (at 1 GiB
// live and 64 MiB of room, 16 times GOGC=100's work, up to the runtime's
// 50% CPU cap); a quarter keeps it at most 4 times.
func limitFor(target int64, live, room uint64) int64 {
	if target <= 0 {
		return math.MaxInt64
	}
	floor := live + max(room, live/4)
	if floor < live || floor > math.MaxInt64 {
		floor = math.MaxInt64
	}
	return max(target, int64(floor))
}

// adjust sets the limit for the target and the live heap the last
// collection left.
func (c *Ceiling) adjust() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped.Load() {
		return
	}
	metrics.Read(c.sample)
	var live uint64
	if c.sample[0].Value.Kind() == metrics.KindUint64 {
		live = c.sample[0].Value.Uint64()
	}
	if l := limitFor(c.target(), live, c.room); l != c.limit {
		c.limit = l
		debug.SetMemoryLimit(l)
	}
}

// Limit is the memory limit the ceiling set last (the starting one before
// its first adjustment).
func (c *Ceiling) Limit() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// Stop ends the ceiling and restores the limit in force at its start.
func (c *Ceiling) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped.Swap(true) {
		return
	}
	debug.SetMemoryLimit(c.before)
	activeCeiling.CompareAndSwap(c, nil)
}
