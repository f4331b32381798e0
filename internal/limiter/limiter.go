package limiter

import (
	"context"
	"time"
)

// Limiter counts, per key, the places held at once (caps) and the events of
// a time window (rate limits), across every replica sharing a Redis
// (replica.Redis.Limiter; limitertest.NewLocal counts in one process, for
// tests). Callers keep apart by key prefix.
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
