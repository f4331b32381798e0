package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// What a guest's outcome may occupy while the store cannot take it.
const (
	// MaxPendingEnds is the most task ends kept for a store that is
	// unavailable; past it an end is lost (and logged).
	MaxPendingEnds = 4096
	// MaxPendingBytes bounds the results kept so; a result that does not
	// fit is replaced by a failure saying so.
	MaxPendingBytes = 64 << 20
)

// ErrPending is wrapped by FinishOrKeep's error when the store did not
// take the end and it is kept, to be written when the store is back.
var ErrPending = errors.New("the task store is unavailable; the task's outcome is kept in memory and written when it is back")

// pendingEnd is a task end the store did not take.
type pendingEnd struct {
	to      Status
	message string
	result  []byte
	rpcErr  *abi.Error
	size    int64
}

// retryable reports whether a Finish failed for want of a store (the end
// can be written later), not because the task ended, is gone or the
// manager closed.
func retryable(err error) bool {
	return err != nil && !errors.Is(err, ErrTerminal) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrClosed) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.As(err, new(*ResultLimitError))
}

// FinishOrKeep is Finish for the outcome of a task's guest: when the store
// cannot take it (a Redis outage), the outcome is kept in memory (at most
// MaxPendingEnds ends and MaxPendingBytes of results; a result that does
// not fit becomes a failure saying so) and written as soon as the store
// takes it, retried every second; until then the task keeps its place and
// its lease, so no other replica takes it over. The error then wraps
// ErrPending.
func (m *Manager) FinishOrKeep(ctx context.Context, id string, to Status, message string, result []byte, rpcErr *abi.Error) (*Task, error) {
	t, err := m.Finish(ctx, id, to, message, result, rpcErr)
	if !retryable(err) {
		return t, err
	}
	p := &pendingEnd{to: to, message: message, result: result, rpcErr: rpcErr, size: resultSize(result, rpcErr)}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, err
	}
	if m.pending == nil {
		m.pending = map[string]*pendingEnd{}
	}
	if _, ok := m.pending[id]; !ok && len(m.pending) >= MaxPendingEnds {
		m.mu.Unlock()
		m.log.Error("a task's outcome is lost: the task store is unavailable and too many outcomes wait for it", "task", id, "waiting", MaxPendingEnds, "err", err)
		return nil, err
	}
	if m.pendingBytes+p.size > MaxPendingBytes {
		msg := fmt.Sprintf("Task failed: its result (%d bytes) could not be kept while the task store was unavailable", p.size)
		p = &pendingEnd{to: Failed, message: msg, rpcErr: &abi.Error{Code: abi.CodeInternalError, Message: msg}}
		p.size = resultSize(nil, p.rpcErr)
	}
	if old, ok := m.pending[id]; ok {
		m.pendingBytes -= old.size
	}
	m.pending[id] = p
	m.pendingBytes += p.size
	start := !m.retrying
	m.retrying = true
	m.mu.Unlock()
	m.log.Warn("recording a task's outcome failed; it is kept and written when the task store is back", "task", id, "err", err)
	if start {
		m.sweeping.Add(1)
		go m.writePending()
	}
	return nil, fmt.Errorf("%w: %w", ErrPending, err)
}

// writePending writes the kept ends until none is left or the manager
// closes.
func (m *Manager) writePending() {
	defer m.sweeping.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			m.mu.Lock()
			n := len(m.pending)
			m.retrying = false
			m.mu.Unlock()
			if n > 0 {
				m.log.Error("task outcomes lost at shutdown: the task store did not come back", "tasks", n)
			}
			return
		case <-t.C:
		}
		m.mu.Lock()
		ids := make([]string, 0, len(m.pending))
		for id := range m.pending {
			ids = append(ids, id)
		}
		m.mu.Unlock()
		for _, id := range ids {
			m.mu.Lock()
			p := m.pending[id]
			m.mu.Unlock()
			if p == nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := m.Finish(ctx, id, p.to, p.message, p.result, p.rpcErr)
			cancel()
			if retryable(err) {
				break // still unavailable: try again at the next tick
			}
			m.mu.Lock()
			if m.pending[id] == p {
				delete(m.pending, id)
				m.pendingBytes -= p.size
			}
			m.mu.Unlock()
			if err == nil {
				m.log.Info("a task's kept outcome was written", "task", id, "status", p.to)
			}
		}
		m.mu.Lock()
		if len(m.pending) == 0 {
			m.retrying = false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
	}
}
