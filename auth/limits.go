package auth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits cap what one principal may do at once so that one tenant cannot
// starve the rest. Zero values mean no cap.
type Limits struct {
	// Concurrent caps the POST requests (calls) a principal has in flight.
	Concurrent int
	// PerMinute caps a principal's POST requests per minute, as a token
	// bucket holding Burst requests (0 means PerMinute) refilled at
	// PerMinute per minute.
	PerMinute int
	// Burst is the bucket's size.
	Burst int
}

// The caps named in refusals.
const (
	CapConcurrent = "concurrent-requests"
	CapPerMinute  = "requests-per-minute"
)

type limiter struct {
	lim   Limits
	mu    sync.Mutex
	per   map[string]*principalLimits
	swept time.Time
}

type principalLimits struct {
	inFlight int
	bucket   *rate.Limiter
	seen     time.Time
}

func newLimiter(l Limits) *limiter {
	if l.Burst <= 0 {
		l.Burst = l.PerMinute
	}
	return &limiter{lim: l, per: map[string]*principalLimits{}}
}

// acquire admits one request of name: it returns the function that ends
// it, or nil with the cap reached and how long to wait.
func (l *limiter) acquire(name string) (release func(), cap string, retry time.Duration) {
	if l.lim.Concurrent <= 0 && l.lim.PerMinute <= 0 {
		return func() {}, "", 0
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	pl := l.per[name]
	if pl == nil {
		pl = &principalLimits{}
		if l.lim.PerMinute > 0 {
			pl.bucket = rate.NewLimiter(rate.Limit(float64(l.lim.PerMinute)/60), l.lim.Burst)
		}
		l.per[name] = pl
	}
	pl.seen = now
	if l.lim.Concurrent > 0 && pl.inFlight >= l.lim.Concurrent {
		return nil, CapConcurrent, time.Second
	}
	if pl.bucket != nil {
		res := pl.bucket.ReserveN(now, 1)
		if d := res.DelayFrom(now); d > 0 {
			res.CancelAt(now)
			return nil, CapPerMinute, d
		}
	}
	pl.inFlight++
	return func() {
		l.mu.Lock()
		pl.inFlight--
		l.mu.Unlock()
	}, "", 0
}

// sweep forgets principals idle for ten minutes (their bucket is full by
// then, as a new one would be), at most once a minute.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for k, pl := range l.per {
		if pl.inFlight == 0 && now.Sub(pl.seen) > 10*time.Minute {
			delete(l.per, k)
		}
	}
}
