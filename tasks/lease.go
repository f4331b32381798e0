package tasks

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// DefaultLease is how long a replica's claim on the tasks it runs lasts
// without renewal, with a shared store.
const DefaultLease = 10 * time.Second

// sharedPoll is how often a waiter re-reads a task in a shared store, in
// case a change published by another replica was lost (an outage).
const sharedPoll = time.Second

// Causes with which a replica stops a task's guest because of what another
// replica did.
var (
	// ErrEndedElsewhere: another replica ended the task (say a
	// tasks/cancel served there).
	ErrEndedElsewhere = errors.New("task ended on another replica")
)

// Shared is a Store that several replicas share (Redis). With one, the
// Manager keeps today's rules per task but recovers by lease instead of
// failing every working task at start-up: each replica renews a lease
// while it lives, the store records which replica runs each working task,
// and a task whose replica stopped renewing is failed (MsgInterrupted) by
// whichever replica notices. Changes made by other replicas reach this
// one's waiters, guests (a cancellation stops the guest where it runs) and
// OnChange observer.
type Shared interface {
	Store
	// Replica is this process's id among the replicas.
	Replica() string
	// Renew extends this replica's lease to ttl from now.
	Renew(ctx context.Context, ttl time.Duration) error
	// Drop ends this replica's lease (at shutdown).
	Drop(ctx context.Context) error
	// Orphans returns the running tasks whose replica holds no lease, by
	// id, with that replica's id.
	Orphans(ctx context.Context) (map[string]string, error)
	// Claim takes over task id from replica dead, if dead still runs it
	// and still holds no lease; false when someone else did.
	Claim(ctx context.Context, id, dead string) (bool, error)
	// Watch starts calling fn with each task another replica creates or
	// changes from now on, until ctx is done; done is closed when it
	// stopped. An error says the subscription is not confirmed yet (it is
	// retried).
	Watch(ctx context.Context, fn func(*Task)) (done <-chan struct{}, err error)
}

// startShared starts the lease keeper and the watcher of other replicas'
// changes; Close stops them.
func (m *Manager) startShared() {
	ctx, cancel := context.WithCancel(context.Background())
	watching, err := m.shared.Watch(ctx, m.remoteChange)
	if err != nil {
		m.log.Warn("tasks: cannot follow the other replicas' changes yet", "err", err)
	}
	m.sweeping.Add(3)
	go func() {
		defer m.sweeping.Done()
		<-m.stop
		cancel()
	}()
	go func() {
		defer m.sweeping.Done()
		<-watching
	}()
	go func() {
		defer m.sweeping.Done()
		m.keepLease(ctx)
	}()
}

// recoverShared is Recover with a shared store: the lease is taken at
// once; orphans are found by the lease keeper, never by age.
func (m *Manager) recoverShared(ctx context.Context) error {
	if err := m.shared.Renew(ctx, m.leaseKey()); err != nil {
		// Not fatal: the keeper retries, and task operations report the
		// outage themselves.
		m.log.Warn("tasks: cannot take this replica's lease", "err", err)
	}
	return nil
}

// leaseKey is how long a renewal keeps the lease key: three quarters of
// the lease, so that with the two checks an eighth of a lease apart that
// confirm a missing key, a dead replica's tasks fail within the lease.
func (m *Manager) leaseKey() time.Duration { return m.opts.Lease * 3 / 4 }

// keepLease renews this replica's lease every eighth of a lease and fails
// the tasks of replicas whose lease is gone. A task is taken over only
// when its replica's lease was seen missing at two looks at least an
// eighth of a lease apart (measured, not counted: a renewal that blocked
// through an outage leaves a tick waiting, and the next look then comes
// at once), so a replica whose renewals failed for a while (an outage of
// Redis shorter than about three quarters of the lease) renews it first.
// After an outage of the store itself no task is taken over for half a
// lease: every replica's lease may have lapsed in it, and the others
// reconnect on their own schedule (their client's dial back-off), so a
// replica back first must not fail their tasks.
func (m *Manager) keepLease(ctx context.Context) {
	every := m.opts.Lease / 8
	tick := time.NewTicker(every)
	defer tick.Stop()
	type suspect struct {
		replica string
		since   time.Time
	}
	suspects := map[string]suspect{}
	var graceUntil time.Time
	failing := false
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := m.shared.Renew(ctx, m.leaseKey()); err != nil {
			if !failing && ctx.Err() == nil {
				m.log.Warn("tasks: cannot renew this replica's lease", "err", err)
			}
			failing = true
			continue
		}
		if failing {
			m.log.Info("tasks: the shared store is back; lease renewed")
			failing = false
			m.reconcile(ctx)
			// Every replica's lease may have lapsed during the outage:
			// forget what was suspected before it and look again from
			// the next tick, so that the others, back within a tick,
			// renew theirs (and write the outcomes they kept) before
			// any of their tasks is taken over.
			suspects = map[string]suspect{}
			graceUntil = time.Now().Add(m.opts.Lease / 2)
			m.renewHolds(ctx)
			continue
		} else if n%8 == 0 {
			m.reconcile(ctx)
		}
		m.renewHolds(ctx)
		orphans, err := m.shared.Orphans(ctx)
		if err != nil {
			continue
		}
		now := time.Now()
		next := make(map[string]suspect, len(orphans))
		for id, rid := range orphans {
			seen, ok := suspects[id]
			if !ok || seen.replica != rid {
				next[id] = suspect{rid, now}
				continue
			}
			if now.Sub(seen.since) < every || now.Before(graceUntil) {
				next[id] = seen
				continue
			}
			m.takeOver(ctx, id, rid)
		}
		suspects = next
	}
}

// takeOver fails a task whose replica died, as Recover does after a
// restart.
func (m *Manager) takeOver(ctx context.Context, id, dead string) {
	ok, err := m.shared.Claim(ctx, id, dead)
	if err != nil || !ok {
		return
	}
	_, err = m.Update(ctx, id, func(t *Task) error {
		if err := m.Move(t, Failed, MsgInterrupted); err != nil {
			return err
		}
		t.Error = &abi.Error{Code: abi.CodeInternalError, Message: MsgInterrupted}
		return nil
	})
	if err != nil && !errors.Is(err, ErrTerminal) && !errors.Is(err, ErrNotFound) {
		m.log.Warn("tasks: cannot fail the task of a replica that stopped", "task", id, "replica", dead, "err", err)
		return
	}
	m.log.Info("tasks: task of a replica that stopped renewing its lease failed", "task", id, "replica", dead)
}

// remoteChange applies a change another replica made: waiters wake, a
// guest running here for a task that ended there stops, a task resumed
// there stops counting here, and the observer is told.
// reconcile re-reads the tasks whose guests run here and applies the
// ones another replica ended (a tasks/cancel served there) as if their
// change had arrived: the changes are published on a channel that keeps
// nothing, so one sent while this replica's subscription was cut (a Redis
// restart, a network fault) would otherwise leave the guest running. It
// runs once per lease and when the store comes back after an outage.
func (m *Manager) reconcile(ctx context.Context) {
	m.mu.Lock()
	ids := make([]string, 0, len(m.runs))
	for id, r := range m.runs {
		if r.cancel != nil && r.cancelAt.IsZero() {
			ids = append(ids, id)
		}
	}
	m.mu.Unlock()
	for _, id := range ids {
		t, err := m.store.Get(ctx, id)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue
			}
			return
		}
		if t.Status.Terminal() {
			m.remoteChange(t)
		}
	}
}

func (m *Manager) remoteChange(t *Task) {
	var cancel context.CancelCauseFunc
	m.mu.Lock()
	if ch, ok := m.changed[t.ID]; ok {
		close(ch)
		delete(m.changed, t.ID)
	}
	if r, ok := m.runs[t.ID]; ok {
		switch {
		case t.Status.Terminal():
			if r.counted {
				m.uncount(r)
			}
			if r.cancel == nil {
				delete(m.runs, t.ID)
			} else {
				cancel = r.cancel
				if r.cancelAt.IsZero() {
					r.cancelAt = time.Now()
				}
			}
		case t.Status == Working && r.cancel == nil:
			// Resumed by a tasks/update served on another replica,
			// which runs it now.
			if r.counted {
				m.uncount(r)
			}
			delete(m.runs, t.ID)
		}
	}
	fn := m.onChange
	m.mu.Unlock()
	if cancel != nil {
		cause := ErrEndedElsewhere
		if t.Status == Canceled {
			cause = ErrCanceledByClient
		}
		cancel(cause)
	}
	if fn != nil {
		fn(t)
	}
}

// adoptLocked makes a task that this replica moved back to working (a
// resume after input) one of its runs, counted under the caps, when
// another replica created it (m.mu held).
func (m *Manager) adoptLocked(t *Task, before Status) {
	if m.shared == nil || t.Status != Working || before.Terminal() {
		return
	}
	if _, ok := m.runs[t.ID]; ok {
		return
	}
	r := &run{owner: t.Owner, counted: true, stopped: closedChan()}
	m.runs[t.ID] = r
	m.active++
	m.perOwner[t.Owner]++
	if m.opts.Limiter != nil {
		// It counts under the shared per-principal cap too (it passed
		// the cap where it was created).
		go m.holdFor(r)
	}
}

// holdFor takes a place under the Limiter for an adopted run, past the
// cap.
func (m *Manager) holdFor(r *run) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	h, ok, err := m.opts.Limiter.Acquire(ctx, "tasks:"+r.owner, math.MaxInt32, m.opts.Lease)
	if err != nil || !ok {
		return
	}
	m.mu.Lock()
	keep := r.counted && r.hold == nil
	if keep {
		r.hold = h
	}
	m.mu.Unlock()
	if !keep {
		m.releaseHold(h)
	}
}

// sweepShared is Sweep with a shared store, where the store expires
// records itself: the guests here whose task is gone or expired stop.
func (m *Manager) sweepShared(ctx context.Context) {
	m.mu.Lock()
	ids := make([]string, 0, len(m.runs))
	for id := range m.runs {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	now := m.opts.Now()
	for _, id := range ids {
		t, err := m.store.Get(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			t = &Task{ID: id}
		case err != nil:
			continue
		case t.Expired(now):
			if err := m.store.Delete(ctx, id); err != nil {
				continue
			}
		default:
			continue
		}
		m.stopGuest(id, ErrExpired)
		m.forget(t)
	}
}

// pollWait is a channel a waiter also wakes on with a shared store, nil
// otherwise.
func (m *Manager) pollWait() <-chan time.Time {
	if m.shared == nil {
		return nil
	}
	return time.After(sharedPoll)
}
