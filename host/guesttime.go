package host

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// Runs at load (a describe or discovery run, a snapshot's start-up) are
// judged by what their guest did, not by the wall clock: on a busy machine
// an honest guest waits for a CPU, and a wall-clock deadline refused it for
// good (issue 37). Such a run locks its goroutine to its OS thread, and its
// deadline counts the guest's time: the CPU time of that thread
// (CLOCK_THREAD_CPUTIME_ID, read from a watching goroutine) plus the time
// the guest chose to wait in the host (a sleep, a read of an empty stdin).
// Time spent waiting for a CPU is not the guest's. A generous wall-clock
// ceiling stays as the last resort; a run it cuts is refused for now only
// (Transient), and the caller tries again later. Where the thread's CPU
// time cannot be read, the guest's time is the wall time, as before.
// docs/design/deadlines.md has the decision and its cost.

// loadCeilingFactor times the deadline, and at least minLoadCeiling, is a
// load run's wall-clock ceiling unless Config.LoadCeiling sets it.
const (
	loadCeilingFactor = 12
	minLoadCeiling    = 60 * time.Second
)

// loadCeiling is the wall-clock ceiling of a load run whose guest may use
// limit of its own time.
func (e *Engine) loadCeiling(limit time.Duration) time.Duration {
	if c := time.Duration(e.loadCeil.Load()); c > 0 {
		return c
	}
	return max(limit*loadCeilingFactor, minLoadCeiling)
}

// SetLoadCeiling changes Config.LoadCeiling for the runs at load that start
// after it (0: the default).
func (e *Engine) SetLoadCeiling(d time.Duration) { e.loadCeil.Store(int64(d)) }

// guestTime is the time a load run's guest has used: its thread's CPU time
// and its waits in the host.
type guestTime struct {
	clock  threadClock
	start  time.Time
	cpu0   time.Duration
	waited atomic.Int64 // nanoseconds of finished waits
	since  atomic.Int64 // start of the wait under way (UnixNano), 0: none
}

// startGuestTime locks the calling goroutine to its thread and starts
// counting; call the returned function, on the same goroutine, when the
// guest has finished running.
func startGuestTime() (*guestTime, func()) {
	runtime.LockOSThread()
	g := &guestTime{clock: currentThreadClock(), start: time.Now()}
	g.cpu0, _ = g.clock.cpu()
	return g, runtime.UnlockOSThread
}

// wait marks the start of a wait of the guest in the host; call the
// returned function at its end. A nil g (a tools/call) does nothing.
func (g *guestTime) wait() func() { return g.waitUpTo(0) }

// waitUpTo is wait for a sleep of d (0: unbounded): no more than d of it
// counts, since what the guest waits past it is waiting for a CPU.
func (g *guestTime) waitUpTo(d time.Duration) func() {
	if g == nil {
		return func() {}
	}
	t0 := time.Now()
	g.since.Store(t0.UnixNano())
	return func() {
		w := time.Since(t0)
		if d > 0 {
			w = min(w, d)
		}
		g.waited.Add(int64(w))
		g.since.Store(0)
	}
}

// used returns the guest's time so far: CPU and waits, or the wall time
// when the thread's CPU time cannot be read; cpuOK reports which.
func (g *guestTime) used() (used time.Duration, cpuOK bool) {
	cpu, ok := g.clock.cpu()
	if !ok {
		return time.Since(g.start), false
	}
	w := time.Duration(g.waited.Load())
	if s := g.since.Load(); s != 0 {
		w += time.Duration(time.Now().UnixNano() - s)
	}
	return cpu - g.cpu0 + w, true
}

// watch ends a load run through end: with over(used) once the guest's time
// reaches limit, or with busy(used, wall) once the wall time reaches
// ceiling first. It returns when ctx ends or stop is called.
func (g *guestTime) watch(ctx context.Context, end context.CancelCauseFunc, limit, ceiling time.Duration,
	over func(used time.Duration) error, busy func(used, wall time.Duration) error) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTimer(time.Hour)
		defer t.Stop()
		for {
			used, _ := g.used()
			wall := time.Since(g.start)
			switch {
			case used >= limit:
				end(over(used))
				return
			case wall >= ceiling:
				end(busy(used, wall))
				return
			}
			// The guest's time grows at most as fast as the wall clock:
			// it cannot reach limit before limit-used from now.
			t.Reset(max(min(limit-used, ceiling-wall), 5*time.Millisecond))
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// busyError is the cause of a load run cut by the wall-clock ceiling
// before its guest used its own deadline: the machine was busy, not the
// guest; the load is tried again later.
type busyError struct{ msg string }

func (e *busyError) Error() string { return e.msg }

// Busy marks err, a refusal at load caused by a busy machine rather than
// by the module (a host-side step such as a script's transform that its
// own wall ceiling cut), as Transient: the module is loaded again later.
func Busy(err error) error { return &busyError{msg: err.Error()} }

// Transient reports whether err refused a module for now only: a run at
// load was cut by the wall-clock ceiling while its guest had used less than
// its deadline (it waited for a CPU). The module should be loaded again
// later, not refused until its file changes.
func Transient(err error) bool {
	var b *busyError
	return errors.As(err, &b)
}

// overDeadline is the cause of a load run whose guest used its deadline;
// head says which ("deadline of 5s exceeded (--describe-timeout)").
func overDeadline(head string, used time.Duration, cpuOK bool) error {
	if !cpuOK {
		return &limitError{head}
	}
	return &limitError{fmt.Sprintf("%s: its guest used %s of CPU and waits (time spent waiting for a CPU does not count)",
		head, used.Round(time.Millisecond))}
}

// cutByCeiling is the cause of a load run cut by the wall-clock ceiling
// while its guest had used less than its deadline, limit (flag names it).
// A negative used is not known.
func cutByCeiling(flag string, limit, used, wall time.Duration) error {
	own := ""
	if used >= 0 {
		own = fmt.Sprintf(" with %s of its own time used", used.Round(time.Millisecond))
	}
	return &busyError{fmt.Sprintf("still running after %s of wall time%s, under its deadline of %s (%s): the machine is busy; it is tried again later",
		wall.Round(time.Millisecond), own, limit, flag)}
}
