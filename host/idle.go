package host

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// idleAfter is how long no call must run, after calls ran, before the
// engine returns freed memory to the operating system.
const idleAfter = 2 * time.Second

// idleReturn gives memory back to the operating system once the engine
// goes idle after calls. A burst of calls leaves garbage (the buffers the
// instances' memories outgrew, the pooled buffers of memory.go) that an
// idle process never collects: no allocation, no collection, until Go's
// forced collection every two minutes, and the scavenger returns the pages
// slowly after it. Measured with bench/burst.sh: after 400 calls growing
// to 64 MiB at 16 clients, RSS stayed at 4.1 GiB for 10 s and 3.3 GiB a
// minute later. Two collections (the first empties the buffer pools into
// their victim caches, the second drops those) and debug.FreeOSMemory,
// once per idle period, cost a few milliseconds of a mostly empty heap.
type idleReturn struct {
	mu      sync.Mutex
	running int
	ran     bool // a call ran since memory was last returned
	timer   *time.Timer
}

// begin records a call starting.
func (r *idleReturn) begin() {
	r.mu.Lock()
	r.running++
	r.ran = true
	r.mu.Unlock()
}

// end records a call ending; the last one arms the idle timer.
func (r *idleReturn) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running--; r.running > 0 {
		return
	}
	if r.timer == nil {
		r.timer = time.AfterFunc(idleAfter, r.fire)
		return
	}
	r.timer.Reset(idleAfter)
}

// fire returns memory if the engine is still idle.
func (r *idleReturn) fire() {
	r.mu.Lock()
	if r.running > 0 || !r.ran {
		r.mu.Unlock()
		return
	}
	r.ran = false
	r.mu.Unlock()
	runtime.GC()
	debug.FreeOSMemory()
}

// stop disarms the timer (Engine.Close).
func (r *idleReturn) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Stop()
	}
}
