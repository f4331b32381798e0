package host

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// startQuantum is how much of its guest's own time a snapshot start-up
// runs in its first lane while another start-up waits for one: more than
// an honest Go reactor's start-up takes in the interpreter, so that a mass
// load of them does not move them all to the long lane.
const startQuantum = time.Second

// startLanes is where snapshot start-ups run, apart from compilations (a
// slow start-up holds no compilation slot). A start-up takes a slot of the
// first lane (as many as --compilations); once its guest has used
// startQuantum of its own time while another start-up waits for that lane,
// it gives its slot up and goes on in the long lane (half as many, at
// least one: each start-up holds a decoded module and an instance), or,
// with the long lane full, is cut for now and taken again later (the
// module runs without its snapshot meanwhile, as when the ceiling cuts it).
// Start-ups that spin thus hold the first lane for a quantum each, not for
// their deadline: with --compilations 1, an honest reactor loaded behind
// four spinning start-ups waited for four deadlines (27 s).
type startLanes struct {
	first   compilePool
	long    compilePool
	waiting atomic.Int64 // start-ups waiting for a slot of first
	// quantum is startQuantum (tests change it).
	quantum time.Duration
}

func newStartLanes(n int) *startLanes {
	return &startLanes{first: make(compilePool, n), long: make(compilePool, max(1, n/2)), quantum: startQuantum}
}

// acquire waits for a slot of the first lane.
func (l *startLanes) acquire(ctx context.Context) (func(), error) {
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	select {
	case l.first <- struct{}{}:
		return func() { <-l.first }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to run a start-up: %w", context.Cause(ctx))
	}
}

// watch moves the start-up holding release (a slot of the first lane) to
// the long lane once gt has used the quantum while another start-up
// waits, or ends it through end when the long lane is full. The returned
// stop, called when the start-up has ended, gives back what it holds.
func (l *startLanes) watch(ctx context.Context, gt *guestTime, end context.CancelCauseFunc, release func()) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	held := release // what the start-up holds once the goroutine exited
	go func() {
		defer close(exited)
		t := time.NewTimer(l.quantum)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			case <-done:
				return
			}
			used, _ := gt.used()
			if used < l.quantum || l.waiting.Load() == 0 {
				t.Reset(max(l.quantum-used, 20*time.Millisecond))
				continue
			}
			select {
			case l.long <- struct{}{}:
				release()
				held = func() { <-l.long }
			default:
				end(&busyError{fmt.Sprintf("gave way to other start-ups after %s of its own time (the long lane of start-ups is taken); it is tried again later",
					used.Round(time.Millisecond))})
			}
			return
		}
	}()
	return func() {
		close(done)
		<-exited
		held()
	}
}
