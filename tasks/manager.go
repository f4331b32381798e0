package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/limiter"
)

// Defaults of the Manager's options.
const (
	DefaultTTL          = time.Hour
	DefaultMaxTTL       = 24 * time.Hour
	DefaultPollInterval = time.Second
	DefaultMaxActive    = 1000
	DefaultMaxPerOwner  = 100
	DefaultSweepEvery   = time.Minute

	// DefaultMaxResultBytes caps one task's stored result (or error).
	DefaultMaxResultBytes = 4 << 20
	// DefaultMaxStoredBytes caps the results stored on the server, and
	// DefaultMaxStoredPerOwner those of one principal, until their tasks
	// expire.
	DefaultMaxStoredBytes    = 256 << 20
	DefaultMaxStoredPerOwner = 64 << 20
)

// Status messages the Manager writes.
const (
	MsgCanceled    = "Cancelled by the client"
	MsgInterrupted = "Task interrupted: the server restarted while it was running"
	MsgShutdown    = "Task interrupted: the server shut down while it was running"
)

// Causes with which the Manager cancels a task's guest.
var (
	ErrCanceledByClient = errors.New("task cancelled by the client")
	ErrExpired          = errors.New("task expired")
	ErrShutdown         = errors.New("server shutting down")
)

// Options configure a Manager. Zero values take the defaults.
type Options struct {
	// TTL is the time to live of a task whose creator asked for none
	// (DefaultTTL); MaxTTL caps what a creator may ask for (DefaultMaxTTL).
	TTL, MaxTTL time.Duration
	// PollInterval is the polling interval suggested to clients.
	PollInterval time.Duration
	// MaxActive caps the tasks not yet ended on this server; MaxPerOwner
	// caps them per principal. With a Limiter both count there too (so
	// across every replica sharing it), besides in this process.
	MaxActive, MaxPerOwner int
	// MaxResultBytes caps the bytes of one task's result (or error);
	// MaxStoredBytes those of all the results kept, MaxStoredPerOwner
	// those of one principal. A result past a cap is not stored: the task
	// fails with an error saying which cap (ResultLimitError).
	MaxResultBytes, MaxStoredBytes, MaxStoredPerOwner int64
	// SweepEvery is the interval of the sweeper that deletes expired tasks
	// (and stops their guests).
	SweepEvery time.Duration
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Lease is how long this replica's claim on the tasks it runs lasts
	// without renewal, with a Shared store (DefaultLease): a replica that
	// stops renewing has its running tasks failed by another within it.
	Lease time.Duration
	// Limiter, when set, also counts the caps there — across replicas
	// with replica.Redis.Limiter: MaxActive under the key "active-tasks" and
	// MaxPerOwner under "tasks:" + principal; each place is held for Lease
	// and renewed while the task is active here.
	Limiter limiter.Limiter
}

// LimitError is the error of a task refused because a cap is reached.
type LimitError struct {
	// PerOwner is true when the principal's cap was reached, false for
	// the server's.
	PerOwner bool
	Limit    int
}

// Error says which cap was reached.
func (e *LimitError) Error() string {
	if e.PerOwner {
		return fmt.Sprintf("Too many concurrent tasks: this client already has %d tasks running (the limit per client)", e.Limit)
	}
	return fmt.Sprintf("Too many concurrent tasks: the server already has %d tasks running (its limit)", e.Limit)
}

// ResultLimitError is the error a task ends with when its result was
// refused by a cap on stored bytes.
type ResultLimitError struct {
	// Which is "result", "server" or "client".
	Which string
	// Size is the result's size, Limit the cap.
	Size, Limit int64
}

// Error says which cap refused the result.
func (e *ResultLimitError) Error() string {
	switch e.Which {
	case "result":
		return fmt.Sprintf("Task result refused: it is %d bytes; a task result may have at most %d", e.Size, e.Limit)
	case "client":
		return fmt.Sprintf("Task result refused: this client's stored task results would exceed %d bytes (the limit per client) until older tasks expire", e.Limit)
	}
	return fmt.Sprintf("Task result refused: the server's stored task results would exceed %d bytes (its limit) until older tasks expire", e.Limit)
}

// run is what the Manager knows of a task not yet ended in this process.
type run struct {
	owner    string
	counted  bool                    // the task counts against the caps (not ended)
	cancel   context.CancelCauseFunc // stops the task's guest; nil when none runs
	stopped  chan struct{}           // closed when no guest runs any more
	cancelAt time.Time               // when the guest was told to stop
	hold     limiter.Hold            // the place under Options.Limiter, if any
}

// Manager applies the task rules on top of a Store. It is safe for
// concurrent use.
type Manager struct {
	store  Store
	shared Shared // store, when replicas share it; nil otherwise
	opts   Options
	log    *slog.Logger

	mu       sync.Mutex
	runs     map[string]*run
	perOwner map[string]int
	active   int
	changed  map[string]chan struct{} // closed at the task's next change
	stored   int64                    // bytes of the results kept
	storedBy map[string]int64         // … per owner
	onChange func(*Task)
	closed   bool

	stop     chan struct{}
	sweeping sync.WaitGroup

	// Task ends the store did not take, written when it is back
	// (pending.go); guarded by mu.
	pending      map[string]*pendingEnd
	pendingBytes int64
	retrying     bool // writePending runs
}

// NewManager creates a manager over store, recovers the tasks a previous
// process left (see Recover) and starts the sweeper. Close it to stop the
// sweeper and the tasks' guests and to close the store.
func NewManager(ctx context.Context, store Store, opts Options) (*Manager, error) {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxTTL <= 0 {
		opts.MaxTTL = DefaultMaxTTL
	}
	if opts.TTL > opts.MaxTTL {
		opts.TTL = opts.MaxTTL
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MaxActive <= 0 {
		opts.MaxActive = DefaultMaxActive
	}
	if opts.MaxPerOwner <= 0 {
		opts.MaxPerOwner = DefaultMaxPerOwner
	}
	if opts.SweepEvery <= 0 {
		opts.SweepEvery = DefaultSweepEvery
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.MaxStoredBytes <= 0 {
		opts.MaxStoredBytes = DefaultMaxStoredBytes
	}
	if opts.MaxStoredPerOwner <= 0 {
		opts.MaxStoredPerOwner = DefaultMaxStoredPerOwner
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	m := &Manager{store: store, opts: opts, log: opts.Logger, runs: map[string]*run{},
		perOwner: map[string]int{}, storedBy: map[string]int64{}, changed: map[string]chan struct{}{}, stop: make(chan struct{})}
	m.shared, _ = store.(Shared)
	if err := m.Recover(ctx); err != nil {
		return nil, err
	}
	m.sweeping.Add(1)
	go m.sweeper()
	if m.shared != nil {
		m.startShared()
	}
	return m, nil
}

// Options returns the effective options.
func (m *Manager) Options() Options { return m.opts }

// OnChange sets the function called after every change of a task's status
// (with the changed task) and when a task is created. It runs on the
// goroutine that made the change and must not block.
func (m *Manager) OnChange(fn func(*Task)) {
	m.mu.Lock()
	m.onChange = fn
	m.mu.Unlock()
}

// NewID returns a fresh task id.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "task-" + hex.EncodeToString(b[:])
}

// Slot is a reserved place under the caps, taken before a task's guest
// starts: either Create consumes it or Release gives it back.
type Slot struct {
	m     *Manager
	owner string
	hold  limiter.Hold
	once  sync.Once
}

// Reserve takes a place for a task of owner under the caps, or fails with
// a *LimitError.
func (m *Manager) Reserve(owner string) (*Slot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if m.active >= m.opts.MaxActive {
		return nil, &LimitError{Limit: m.opts.MaxActive}
	}
	if m.perOwner[owner] >= m.opts.MaxPerOwner {
		return nil, &LimitError{PerOwner: true, Limit: m.opts.MaxPerOwner}
	}
	m.active++
	m.perOwner[owner]++
	if m.opts.Limiter == nil {
		return &Slot{m: m, owner: owner}, nil
	}
	m.mu.Unlock()
	hold, err := m.acquire(owner)
	m.mu.Lock()
	if hold == nil {
		m.uncount(&run{owner: owner})
		return nil, err
	}
	return &Slot{m: m, owner: owner, hold: hold}, nil
}

// Release gives the slot back (no-op once the slot is consumed or
// released).
func (s *Slot) Release() {
	s.once.Do(func() { s.m.release(s.owner, s.hold) })
}

func (m *Manager) release(owner string, hold limiter.Hold) {
	m.mu.Lock()
	m.uncount(&run{owner: owner, hold: hold})
	m.mu.Unlock()
}

// TTL returns the time to live for a task whose creator asked for
// requested (0 for none).
func (m *Manager) TTL(requested time.Duration) time.Duration {
	switch {
	case requested <= 0:
		return m.opts.TTL
	case requested > m.opts.MaxTTL:
		return m.opts.MaxTTL
	}
	return requested
}

// Create stores t as a new working task, consuming slot. t.ID, Owner, Tool
// and Era must be set; CreatedAt, UpdatedAt, Status, TTL (see Manager.TTL)
// and PollInterval are filled in when zero. cancel, when not nil, stops the
// task's guest; the task counts as running until it ends. On failure the
// slot is released.
func (m *Manager) Create(ctx context.Context, t *Task, slot *Slot, cancel context.CancelCauseFunc) error {
	now := m.opts.Now().UTC()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	t.UpdatedAt = t.CreatedAt
	t.Status = Working
	if t.TTL <= 0 {
		t.TTL = m.opts.TTL
	}
	if t.PollInterval <= 0 {
		t.PollInterval = m.opts.PollInterval
	}
	consumed := false
	defer func() {
		if !consumed {
			slot.Release()
		}
	}()
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := m.store.Create(ctx, t); err != nil {
		return fmt.Errorf("tasks: create %s: %w", t.ID, err)
	}
	m.mu.Lock()
	slot.once.Do(func() {}) // the run owns the place from now on
	consumed = true
	m.runs[t.ID] = &run{owner: t.Owner, counted: true, cancel: cancel, stopped: make(chan struct{}), hold: slot.hold}
	fn := m.onChange
	m.mu.Unlock()
	if cancel == nil {
		m.Stopped(t.ID)
	}
	if fn != nil {
		fn(t.Clone())
	}
	return nil
}

// Attach records the cancel function of a new run of the task's guest (a
// re-run after input). It returns false when the task is no longer active
// here, in which case the caller must not run the guest.
func (m *Manager) Attach(id string, cancel context.CancelCauseFunc) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok || !r.counted || m.closed {
		return false
	}
	r.cancel, r.stopped, r.cancelAt = cancel, make(chan struct{}), time.Time{}
	return true
}

// Stopped records that the task's guest is no longer running. The time it
// took the guest to stop after it was told to is logged (debug level,
// "stop_latency").
func (m *Manager) Stopped(id string) {
	m.mu.Lock()
	r, ok := m.runs[id]
	if !ok {
		m.mu.Unlock()
		return
	}
	r.cancel = nil
	select {
	case <-r.stopped:
	default:
		close(r.stopped)
	}
	if !r.counted {
		delete(m.runs, id)
	}
	at := r.cancelAt
	m.mu.Unlock()
	if !at.IsZero() {
		m.log.Debug("task guest stopped", "task", id, "stop_latency", time.Since(at))
	}
}

// Get returns a task owned by owner; ErrNotFound when there is none, it is
// another owner's, or it expired.
func (m *Manager) Get(ctx context.Context, id, owner string) (*Task, error) {
	t, err := m.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Owner != owner || t.Expired(m.opts.Now()) {
		return nil, ErrNotFound
	}
	return t, nil
}

// Lookup returns a task whoever owns it (for the server's own use).
func (m *Manager) Lookup(ctx context.Context, id string) (*Task, error) {
	return m.store.Get(ctx, id)
}

// Update changes a task with fn under the store's atomicity; fn may move
// the task with Move. Observers are told of a change of status, and a task
// that ended stops counting against the caps. fn's error is returned as
// is.
func (m *Manager) Update(ctx context.Context, id string, fn func(*Task) error) (*Task, error) {
	var before Status
	t, err := m.store.Update(ctx, id, func(t *Task) error {
		before = t.Status
		return fn(t)
	})
	if err != nil {
		return nil, err
	}
	if t.Status != before || t.Status == InputRequired {
		m.changedTask(t, before)
	}
	return t, nil
}

// Move changes t's status at the manager's clock (inside Update).
func (m *Manager) Move(t *Task, to Status, message string) error {
	return t.move(to, message, m.opts.Now().UTC())
}

// Finish moves a task to a terminal status with its result or error, unless
// it already ended (then it returns ErrTerminal and changes nothing).
//
// The result is stored only within the caps on stored bytes; past one the
// task fails instead, with a ResultLimitError as its error.
func (m *Manager) Finish(ctx context.Context, id string, to Status, message string, result []byte, rpcErr *abi.Error) (*Task, error) {
	n := resultSize(result, rpcErr)
	var owner string
	var held int64 // bytes taken under the caps by fn
	t, err := m.Update(ctx, id, func(t *Task) error {
		if t.Status.Terminal() {
			return m.Move(t, to, message) // ErrTerminal
		}
		m.unhold(owner, held) // fn may run again
		owner, held = t.Owner, 0
		res, rerr := result, rpcErr
		if lim := m.hold(t.Owner, n); lim != nil {
			to, message = Failed, lim.Error()
			res, rerr = nil, &abi.Error{Code: abi.CodeInternalError, Message: lim.Error()}
			m.log.Warn("task result refused", "task", id, "bytes", n, "limit", lim.Limit, "cap", lim.Which)
			held = m.hold2(t.Owner, resultSize(nil, rerr))
		} else {
			held = n
		}
		if err := m.Move(t, to, message); err != nil {
			return err
		}
		t.Result, t.Error = res, rerr
		return nil
	})
	if err != nil {
		m.unhold(owner, held)
	}
	return t, err
}

// resultSize is what a task's result or error counts under the caps.
func resultSize(result []byte, e *abi.Error) int64 {
	n := int64(len(result))
	if e != nil {
		n += int64(len(e.Message) + len(e.Data))
	}
	return n
}

// hold counts n bytes of owner's results, or says which cap they break.
func (m *Manager) hold(owner string, n int64) *ResultLimitError {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case n > m.opts.MaxResultBytes:
		return &ResultLimitError{Which: "result", Size: n, Limit: m.opts.MaxResultBytes}
	case m.storedBy[owner]+n > m.opts.MaxStoredPerOwner:
		return &ResultLimitError{Which: "client", Size: n, Limit: m.opts.MaxStoredPerOwner}
	case m.stored+n > m.opts.MaxStoredBytes:
		return &ResultLimitError{Which: "server", Size: n, Limit: m.opts.MaxStoredBytes}
	}
	m.stored += n
	m.storedBy[owner] += n
	return nil
}

// hold2 counts n bytes of owner's results whatever the caps (an error
// message the manager wrote, small).
func (m *Manager) hold2(owner string, n int64) int64 {
	m.mu.Lock()
	m.stored += n
	m.storedBy[owner] += n
	m.mu.Unlock()
	return n
}

// unhold gives back n bytes of owner's results. The counts never go
// below zero: the few status errors the manager writes itself (shutdown,
// restart) are not counted when written.
func (m *Manager) unhold(owner string, n int64) {
	if n == 0 {
		return
	}
	m.mu.Lock()
	m.stored = max(0, m.stored-n)
	if m.storedBy[owner] -= n; m.storedBy[owner] <= 0 {
		delete(m.storedBy, owner)
	}
	m.mu.Unlock()
}

// storedBytes returns the bytes of task results kept, on the server and
// for owner.
func (m *Manager) storedBytes(owner string) (all, ofOwner int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stored, m.storedBy[owner]
}

// changedTask wakes the task's waiters, releases an ended task's place and
// tells the observer.
func (m *Manager) changedTask(t *Task, before Status) {
	m.mu.Lock()
	if ch, ok := m.changed[t.ID]; ok {
		close(ch)
		delete(m.changed, t.ID)
	}
	if t.Status.Terminal() && !before.Terminal() {
		if r, ok := m.runs[t.ID]; ok && r.counted {
			m.uncount(r)
			if r.cancel == nil {
				delete(m.runs, t.ID)
			}
		}
	}
	m.adoptLocked(t, before)
	fn := m.onChange
	m.mu.Unlock()
	if fn != nil {
		fn(t)
	}
}

// next returns a channel closed at the task's next change.
func (m *Manager) next(id string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.changed[id]
	if !ok {
		ch = make(chan struct{})
		m.changed[id] = ch
	}
	return ch
}

// Wait blocks until a task owned by owner ends (or ctx is done) and returns
// it.
func (m *Manager) Wait(ctx context.Context, id, owner string) (*Task, error) {
	for {
		ch := m.next(id)
		t, err := m.Get(ctx, id, owner)
		if err != nil {
			return nil, err
		}
		if t.Status.Terminal() {
			return t, nil
		}
		select {
		case <-ch:
		case <-m.stop:
			// Shutting down: tasks end as failed; look once more.
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			case <-time.After(time.Second):
				return nil, ErrClosed
			}
		case <-m.pollWait():
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Cancel cancels a task owned by owner: it moves to cancelled and its
// guest is stopped. A task that already ended is returned unchanged with
// ErrTerminal.
func (m *Manager) Cancel(ctx context.Context, id, owner string) (*Task, error) {
	if _, err := m.Get(ctx, id, owner); err != nil {
		return nil, err
	}
	t, err := m.Finish(ctx, id, Canceled, MsgCanceled, nil, nil)
	if errors.Is(err, ErrTerminal) {
		t, gerr := m.Get(ctx, id, owner)
		if gerr != nil {
			return nil, gerr
		}
		return t, ErrTerminal
	}
	if err != nil {
		return nil, err
	}
	m.stopGuest(id, ErrCanceledByClient)
	return t, nil
}

// uncount stops counting a run against the caps (m.mu held).
func (m *Manager) uncount(r *run) {
	r.counted = false
	if h := r.hold; h != nil {
		r.hold = nil
		go m.releaseHold(h)
	}
	m.active--
	if m.perOwner[r.owner]--; m.perOwner[r.owner] <= 0 {
		delete(m.perOwner, r.owner)
	}
}

// stopGuest cancels the guest of a task, if one runs here.
func (m *Manager) stopGuest(id string, cause error) {
	m.mu.Lock()
	var cancel context.CancelCauseFunc
	if r, ok := m.runs[id]; ok && r.cancel != nil {
		cancel = r.cancel
		if r.cancelAt.IsZero() {
			r.cancelAt = time.Now()
		}
	}
	m.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// Page is one page of a task listing.
type Page struct {
	Tasks []*Task
	// Next is the cursor of the next page, "" on the last.
	Next string
}

// List returns up to limit tasks of owner in creation order after cursor
// ("" for the first page). When session is not "", only tasks created by
// that legacy session are listed. Expired tasks are left out.
func (m *Manager) List(ctx context.Context, owner, session, cursor string, limit int) (Page, error) {
	if limit <= 0 {
		limit = 50
	}
	var found []*Task
	after := cursor
	now := m.opts.Now()
	for len(found) <= limit {
		batch, err := m.store.List(ctx, owner, after, limit+1)
		if err != nil {
			return Page{}, err
		}
		for _, t := range batch {
			after = t.OrderKey()
			if !t.Expired(now) && (session == "" || t.Session == session) {
				found = append(found, t)
			}
		}
		if len(batch) < limit+1 {
			break
		}
	}
	if len(found) > limit {
		return Page{Tasks: found[:limit], Next: found[limit-1].OrderKey()}, nil
	}
	return Page{Tasks: found}, nil
}

// Recover runs at start-up: tasks that were working when the previous
// process ended, and legacy tasks that waited for input (their guest was
// waiting on a client connection that is gone), are marked failed with a
// status message; modern tasks waiting for input stay resumable; expired
// tasks are deleted. With a Shared store, recovery is by lease instead
// (see Shared): nothing is failed at start-up.
func (m *Manager) Recover(ctx context.Context) error {
	if m.shared != nil {
		return m.recoverShared(ctx)
	}
	now := m.opts.Now()
	var stale, expired []string
	var waiting []*Task
	sizes := map[string]int64{}
	err := m.store.Scan(ctx, func(t *Task) bool {
		if !t.Expired(now) {
			if n := resultSize(t.Result, t.Error); n > 0 {
				sizes[t.Owner] += n
			}
		}
		switch {
		case t.Expired(now):
			expired = append(expired, t.ID)
		case t.Status == Working || (t.Status == InputRequired && t.Era != contract.Modern):
			stale = append(stale, t.ID)
		case t.Status == InputRequired:
			waiting = append(waiting, t)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("tasks: recover: %w", err)
	}
	for _, id := range expired {
		if err := m.store.Delete(ctx, id); err != nil {
			return fmt.Errorf("tasks: recover: %w", err)
		}
	}
	for _, id := range stale {
		_, err := m.store.Update(ctx, id, func(t *Task) error {
			if err := m.Move(t, Failed, MsgInterrupted); err != nil {
				return err
			}
			t.Error = &abi.Error{Code: abi.CodeInternalError, Message: MsgInterrupted}
			return nil
		})
		if err != nil && !errors.Is(err, ErrTerminal) {
			return fmt.Errorf("tasks: recover: %w", err)
		}
	}
	m.mu.Lock()
	for owner, n := range sizes {
		m.stored += n
		m.storedBy[owner] += n
	}
	for _, t := range waiting {
		if _, ok := m.runs[t.ID]; !ok {
			m.runs[t.ID] = &run{owner: t.Owner, counted: true, stopped: closedChan()}
			m.active++
			m.perOwner[t.Owner]++
		}
	}
	m.mu.Unlock()
	if len(stale)+len(expired)+len(waiting) > 0 {
		m.log.Info("tasks recovered", "interrupted", len(stale), "expired", len(expired), "waiting_for_input", len(waiting))
	}
	return nil
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Sweep deletes expired tasks, stopping the guests of those still running.
func (m *Manager) Sweep(ctx context.Context) {
	if m.shared != nil {
		m.sweepShared(ctx)
		return
	}
	now := m.opts.Now()
	var expired []*Task
	if err := m.store.Scan(ctx, func(t *Task) bool {
		if t.Expired(now) {
			expired = append(expired, t)
		}
		return true
	}); err != nil {
		if !errors.Is(err, ErrClosed) {
			m.log.Warn("task sweep failed", "err", err)
		}
		return
	}
	for _, t := range expired {
		m.stopGuest(t.ID, ErrExpired)
		if err := m.store.Delete(ctx, t.ID); err != nil {
			m.log.Warn("deleting an expired task failed", "task", t.ID, "err", err)
			continue
		}
		m.forget(t)
		m.unhold(t.Owner, resultSize(t.Result, t.Error))
		m.log.Debug("task expired", "task", t.ID, "status", t.Status)
	}
}

// forget drops what the manager knows of a deleted task.
func (m *Manager) forget(t *Task) {
	m.mu.Lock()
	if r, ok := m.runs[t.ID]; ok {
		if r.counted {
			m.uncount(r)
		}
		if r.cancel == nil {
			delete(m.runs, t.ID)
		}
	}
	if ch, ok := m.changed[t.ID]; ok {
		close(ch)
		delete(m.changed, t.ID)
	}
	m.mu.Unlock()
}

func (m *Manager) sweeper() {
	defer m.sweeping.Done()
	t := time.NewTicker(m.opts.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.Sweep(context.Background())
		}
	}
}

// Running returns how many tasks are active here in all and for owner.
func (m *Manager) Running(owner string) (all, ofOwner int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active, m.perOwner[owner]
}

// Close stops the sweeper, marks the tasks still running failed (their
// guests are stopped), waits up to wait for the guests to end, and closes
// the store.
func (m *Manager) Close(ctx context.Context, wait time.Duration) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.stop)
	ids := make([]string, 0, len(m.runs))
	for id := range m.runs {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	m.sweeping.Wait()
	var stopped []chan struct{}
	for _, id := range ids {
		m.mu.Lock()
		r := m.runs[id]
		var cancel context.CancelCauseFunc
		var done chan struct{}
		if r != nil {
			cancel, done = r.cancel, r.stopped
		}
		m.mu.Unlock()
		t, err := m.Lookup(ctx, id)
		if m.shared != nil && cancel == nil {
			// With replicas, only the tasks whose guest runs here.
			err = ErrNotFound
		}
		if err == nil && t.Status == Working || err == nil && t.Status == InputRequired && t.Era != contract.Modern {
			_, _ = m.Update(ctx, id, func(t *Task) error {
				if err := m.Move(t, Failed, MsgShutdown); err != nil {
					return err
				}
				t.Error = &abi.Error{Code: abi.CodeInternalError, Message: MsgShutdown}
				return nil
			})
		}
		if cancel != nil {
			cancel(ErrShutdown)
		}
		if done != nil {
			stopped = append(stopped, done)
		}
	}
	deadline := time.After(wait)
	for _, c := range stopped {
		select {
		case <-c:
		case <-deadline:
			m.log.Warn("task guests still running at shutdown")
			return m.closeStore(ctx)
		}
	}
	return m.closeStore(ctx)
}

// closeStore ends this replica's lease, if any, and closes the store.
func (m *Manager) closeStore(ctx context.Context) error {
	if m.shared != nil {
		_ = m.shared.Drop(ctx)
	}
	return m.store.Close()
}
