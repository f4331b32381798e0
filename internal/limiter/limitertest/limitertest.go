// Package limitertest checks that a limiter.Limiter keeps the contract:
// places up to the limit, given back once on release, keys apart, and
// windows that count events. Every implementation's tests run it.
package limitertest

import (
	"context"
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
