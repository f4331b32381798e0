package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/wasmcp/wasmcp/internal/limiter"
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
	// Shared, when set, counts the caps there — across every server
	// sharing it (Redis, for replicas behind one address) — instead of in
	// this process. The concurrency cap is one place per request in
	// flight, held for SharedHoldFor and renewed while the request runs, so
	// a dead replica's places come back by themselves. The rate is
	// counted in fixed windows of Burst requests, each
	// Burst/PerMinute minutes long: the same average and the same burst
	// as the bucket, but two bursts may meet at a window's edge. When the
	// shared counter fails (Redis unreachable), requests are counted in
	// this process until it answers again, so that they keep being served.
	Shared limiter.Limiter
}

// SharedHoldFor is how long a shared place outlives its last renewal;
// places of requests in flight are renewed every third of it.
const SharedHoldFor = 30 * time.Second

// sharedTimeout bounds one call to the shared counter.
const sharedTimeout = 2 * time.Second

// The caps named in refusals.
const (
	CapConcurrent = "concurrent-requests"
	CapPerMinute  = "requests-per-minute"
)

type principalCaps struct {
	lim   Limits
	log   *slog.Logger
	mu    sync.Mutex
	per   map[string]*principalLimits
	swept time.Time

	// The shared places of the requests in flight, renewed by one
	// goroutine while there are any.
	holds    map[*sharedPlace]struct{}
	renewing bool
	warned   time.Time
}

type principalLimits struct {
	inFlight int
	bucket   *rate.Limiter
	seen     time.Time
}

type sharedPlace struct{ h limiter.Hold }

func newLimiter(l Limits, log *slog.Logger) *principalCaps {
	if l.Burst <= 0 {
		l.Burst = l.PerMinute
	}
	if log == nil {
		log = slog.Default()
	}
	return &principalCaps{lim: l, log: log, per: map[string]*principalLimits{}, holds: map[*sharedPlace]struct{}{}}
}

// acquire admits one request of name: it returns the function that ends
// it, or nil with the cap reached and how long to wait.
func (l *principalCaps) acquire(ctx context.Context, name string) (release func(), cap string, retry time.Duration) {
	if l.lim.Concurrent <= 0 && l.lim.PerMinute <= 0 {
		return func() {}, "", 0
	}
	if l.lim.Shared != nil {
		release, cap, retry, err := l.acquireShared(ctx, name)
		if err == nil {
			return release, cap, retry
		}
		l.warnShared(err)
	}
	return l.acquireLocal(name)
}

// acquireLocal counts in this process.
func (l *principalCaps) acquireLocal(name string) (release func(), cap string, retry time.Duration) {
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

// acquireShared counts in the shared counter; an error means it could not
// count.
func (l *principalCaps) acquireShared(ctx context.Context, name string) (release func(), cap string, retry time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	var place *sharedPlace
	if l.lim.Concurrent > 0 {
		h, ok, err := l.lim.Shared.Acquire(ctx, "principal-requests:"+name, l.lim.Concurrent, SharedHoldFor)
		if err != nil {
			return nil, "", 0, err
		}
		if !ok {
			return nil, CapConcurrent, time.Second, nil
		}
		place = &sharedPlace{h: h}
	}
	if l.lim.PerMinute > 0 {
		window := max(time.Millisecond, time.Duration(l.lim.Burst)*time.Minute/time.Duration(l.lim.PerMinute))
		ok, wait, err := l.lim.Shared.Allow(ctx, "principal-rate:"+name, l.lim.Burst, window)
		if err != nil || !ok {
			if place != nil {
				_ = place.h.Release(ctx)
			}
			if err != nil {
				return nil, "", 0, err
			}
			return nil, CapPerMinute, wait, nil
		}
	}
	if place == nil {
		return func() {}, "", 0, nil
	}
	l.track(place)
	return func() {
		l.mu.Lock()
		delete(l.holds, place)
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		defer cancel()
		if err := place.h.Release(ctx); err != nil {
			l.warnShared(err) // the place comes back after SharedHoldFor
		}
	}, "", 0, nil
}

// track adds a place to renew, starting the renewer if none runs.
func (l *principalCaps) track(p *sharedPlace) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holds[p] = struct{}{}
	if l.renewing {
		return
	}
	l.renewing = true
	go l.renew()
}

// renew keeps the places of the requests in flight until there are none.
func (l *principalCaps) renew() {
	t := time.NewTicker(SharedHoldFor / 3)
	defer t.Stop()
	for range t.C {
		l.mu.Lock()
		if len(l.holds) == 0 {
			l.renewing = false
			l.mu.Unlock()
			return
		}
		ps := make([]*sharedPlace, 0, len(l.holds))
		for p := range l.holds {
			ps = append(ps, p)
		}
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		for _, p := range ps {
			if _, err := p.h.Renew(ctx, SharedHoldFor); err != nil {
				l.warnShared(err)
				break
			}
		}
		cancel()
	}
}

// warnShared logs a failure of the shared counter at most once a minute.
func (l *principalCaps) warnShared(err error) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.warned) < time.Minute {
		l.mu.Unlock()
		return
	}
	l.warned = now
	l.mu.Unlock()
	l.log.Warn("per-principal caps: the shared counter is unavailable; counting in this process until it answers", "err", err)
}

// sweep forgets principals idle for ten minutes (their bucket is full by
// then, as a new one would be), at most once a minute.
func (l *principalCaps) sweep(now time.Time) {
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
