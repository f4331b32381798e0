package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/wasmcp/wasmcp/internal/limiter"
)

// limiterTimeout bounds a call to the Limiter from the Manager.
const limiterTimeout = 3 * time.Second

// activeKey is the Limiter key of the cap on the tasks active in all
// (MaxActive); a principal's keys start with "tasks:".
const activeKey = "active-tasks"

// acquire takes a place under the Limiter for a task of owner: one under
// MaxActive (key activeKey) and one under MaxPerOwner (key "tasks:" +
// owner). It returns nil and a *LimitError when a cap is reached, nil and
// the error when they cannot be counted.
func (m *Manager) acquire(owner string) (limiter.Hold, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	all, ok, err := m.opts.Limiter.Acquire(ctx, activeKey, m.opts.MaxActive, m.opts.Lease)
	switch {
	case err != nil:
		return nil, fmt.Errorf("tasks: counting the server's tasks: %w", err)
	case !ok:
		return nil, &LimitError{Limit: m.opts.MaxActive}
	}
	h, ok, err := m.opts.Limiter.Acquire(ctx, "tasks:"+owner, m.opts.MaxPerOwner, m.opts.Lease)
	switch {
	case err != nil:
		_ = all.Release(ctx)
		return nil, fmt.Errorf("tasks: counting the client's tasks: %w", err)
	case !ok:
		_ = all.Release(ctx)
		return nil, &LimitError{PerOwner: true, Limit: m.opts.MaxPerOwner}
	}
	return holds{all, h}, nil
}

// holds are places held together.
type holds []limiter.Hold

func (hs holds) Renew(ctx context.Context, hold time.Duration) (bool, error) {
	kept := true
	var first error
	for _, h := range hs {
		ok, err := h.Renew(ctx, hold)
		kept = kept && ok
		if first == nil {
			first = err
		}
	}
	return kept, first
}

func (hs holds) Release(ctx context.Context) error {
	var first error
	for _, h := range hs {
		if err := h.Release(ctx); first == nil {
			first = err
		}
	}
	return first
}

func (m *Manager) releaseHold(h limiter.Hold) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	if err := h.Release(ctx); err != nil {
		m.log.Warn("tasks: cannot give back a place under the per-client cap; it returns after the lease", "err", err)
	}
}

// renewHolds keeps the places of the tasks active here.
func (m *Manager) renewHolds(ctx context.Context) {
	m.mu.Lock()
	var hs []limiter.Hold
	for _, r := range m.runs {
		if r.hold != nil {
			hs = append(hs, r.hold)
		}
	}
	m.mu.Unlock()
	for _, h := range hs {
		_, _ = h.Renew(ctx, m.opts.Lease)
	}
}
