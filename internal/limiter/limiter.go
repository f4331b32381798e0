package limiter

import (
	"context"
	"sync"
	"time"
)

// Limiter counts, per key, the places held at once (caps) and the events of
// a time window (rate limits): in this process (NewLocal) or across every
// replica sharing a Redis (replica.Redis.Limiter). Callers keep apart by
// key prefix.
type Limiter interface {
	// Acquire takes one of limit places under key. ok is false (with a
	// nil Hold) when all are taken. A place is kept for hold after it was
	// taken or last renewed, so the places of a replica that died come
	// back by themselves.
	Acquire(ctx context.Context, key string, limit int, hold time.Duration) (h Hold, ok bool, err error)
	// Allow counts one event under key in the current fixed window of
	// length window; ok is false when limit events already happened in it,
	// with the time until the window ends.
	Allow(ctx context.Context, key string, limit int, window time.Duration) (ok bool, retryAfter time.Duration, err error)
}

// Hold is a place taken from a Limiter.
type Hold interface {
	// Renew keeps the place for hold from now; false when it was lost
	// (it outlived its hold).
	Renew(ctx context.Context, hold time.Duration) (bool, error)
	// Release gives the place back (no-op the second time).
	Release(ctx context.Context) error
}

// NewLocal returns a Limiter that counts in this process. Its places never
// expire (a process that dies takes them along); it never fails.
func NewLocal() Limiter {
	return &local{held: map[string]int{}, windows: map[string]*window{}}
}

type local struct {
	mu      sync.Mutex
	held    map[string]int
	windows map[string]*window
}

type window struct {
	start time.Time
	n     int
}

func (l *local) Acquire(_ context.Context, key string, limit int, _ time.Duration) (Hold, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[key] >= limit {
		return nil, false, nil
	}
	l.held[key]++
	return &localHold{l: l, key: key}, true, nil
}

func (l *local) Allow(_ context.Context, key string, limit int, d time.Duration) (bool, time.Duration, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, w := range l.windows {
		if now.Sub(w.start) >= d {
			delete(l.windows, k)
		}
	}
	w := l.windows[key]
	if w == nil {
		w = &window{start: now}
		l.windows[key] = w
	}
	if w.n >= limit {
		return false, w.start.Add(d).Sub(now), nil
	}
	w.n++
	return true, 0, nil
}

type localHold struct {
	l    *local
	key  string
	once sync.Once
}

func (h *localHold) Renew(context.Context, time.Duration) (bool, error) { return true, nil }

func (h *localHold) Release(context.Context) error {
	h.once.Do(func() {
		h.l.mu.Lock()
		if h.l.held[h.key]--; h.l.held[h.key] <= 0 {
			delete(h.l.held, h.key)
		}
		h.l.mu.Unlock()
	})
	return nil
}
