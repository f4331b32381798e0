// Package limitertest checks that a limiter.Limiter keeps the contract
// (Run): places up to the limit, given back once on release, keys apart,
// and windows that count events. Every implementation's tests run it. It
// also holds NewLocal, a Limiter in one process for tests that need a
// shared counter without a Redis.
package limitertest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/limiter"
)

// Run checks l's contract. l must be fresh (no key used).
func Run(t *testing.T, l limiter.Limiter) {
	t.Helper()
	ctx := context.Background()
	h1, ok1, err1 := l.Acquire(ctx, "k", 2, time.Minute)
	_, ok2, err2 := l.Acquire(ctx, "k", 2, time.Minute)
	_, ok3, err3 := l.Acquire(ctx, "k", 2, time.Minute)
	if !ok1 || !ok2 || ok3 || err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("acquire: %v %v %v (%v %v %v)", ok1, ok2, ok3, err1, err2, err3)
	}
	if _, ok, _ := l.Acquire(ctx, "other", 2, time.Minute); !ok {
		t.Fatal("keys share places")
	}
	_ = h1.Release(ctx)
	_ = h1.Release(ctx) // once
	if _, ok, _ := l.Acquire(ctx, "k", 2, time.Minute); !ok {
		t.Fatal("a released place is not free")
	}
	if _, ok, _ := l.Acquire(ctx, "k", 2, time.Minute); ok {
		t.Fatal("a double release freed two places")
	}
	for i := 0; i < 3; i++ {
		if ok, _, err := l.Allow(ctx, "w", 3, 400*time.Millisecond); !ok || err != nil {
			t.Fatalf("event %d refused: %v", i, err)
		}
	}
	ok, after, err := l.Allow(ctx, "w", 3, 400*time.Millisecond)
	if ok || err != nil || after <= 0 || after > 400*time.Millisecond {
		t.Fatalf("fourth event: %v %v %v", ok, after, err)
	}
	time.Sleep(after + 20*time.Millisecond)
	if ok, _, _ := l.Allow(ctx, "w", 3, 400*time.Millisecond); !ok {
		t.Fatal("the next window refuses")
	}
}

// NewLocal returns a limiter.Limiter that counts in this process: the
// shared counter of tests that need one without a Redis. Its places never
// expire (a process that dies takes them along); it never fails.
func NewLocal() limiter.Limiter {
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

func (l *local) Acquire(_ context.Context, key string, limit int, _ time.Duration) (limiter.Hold, bool, error) {
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
