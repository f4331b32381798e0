package host

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadClock is the CPU-time clock of one OS thread, readable from any
// thread of the process.
type threadClock struct {
	id int32
	ok bool
}

// currentThreadClock is the clock of the calling thread (the caller keeps
// its goroutine locked to it).
func currentThreadClock() threadClock {
	tid := int32(unix.Gettid())
	// The kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): a clock id
	// naming one thread's CPU time (what pthread_getcpuclockid returns).
	return threadClock{id: ^tid<<3 | 6, ok: true}
}

// cpu returns the thread's CPU time (user and system).
func (c threadClock) cpu() (time.Duration, bool) {
	if !c.ok {
		return 0, false
	}
	var ts unix.Timespec
	if unix.ClockGettime(c.id, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
