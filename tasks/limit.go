package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Limiter counts, per key, the places held at once (caps) and the events of
// a time window (rate limits): in this process (NewLocalLimiter) or across
// every replica sharing a Redis (Redis.Limiter). The Manager counts its
// per-principal task cap with it; other per-principal caps and rate limits
// of the server (say per authenticated client) can use the same one, each
// under its own keys.
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

// NewLocalLimiter returns a Limiter that counts in this process.
func NewLocalLimiter() Limiter {
	return &localLimiter{held: map[string]int{}, windows: map[string]*window{}}
}

type localLimiter struct {
	mu      sync.Mutex
	held    map[string]int
	windows map[string]*window
}

type window struct {
	start time.Time
	n     int
}

func (l *localLimiter) Acquire(_ context.Context, key string, limit int, _ time.Duration) (Hold, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[key] >= limit {
		return nil, false, nil
	}
	l.held[key]++
	return &localHold{l: l, key: key}, true, nil
}

func (l *localLimiter) Allow(_ context.Context, key string, limit int, d time.Duration) (bool, time.Duration, error) {
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
	l    *localLimiter
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

// Limiter returns the Limiter counted in this Redis, shared by every
// replica using the same key prefix. Places are members of a sorted set
// per key scored by their expiry (Redis's clock, not the replicas');
// windows are counters that expire with the window.
func (r *Redis) Limiter() Limiter { return redisLimiter{r} }

type redisLimiter struct{ r *Redis }

// acquireScript: KEYS: the key's set. ARGV: limit, hold ms, member.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`)

// renewScript: KEYS: the key's set. ARGV: hold ms, member.
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not s or tonumber(s) <= now then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`)

// allowScript: KEYS: the window's counter. ARGV: limit, window ms.
var allowScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); left = tonumber(ARGV[2]) end
  return left
end
return -1
`)

func (l redisLimiter) Acquire(ctx context.Context, key string, limit int, hold time.Duration) (Hold, bool, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	h := &redisHold{r: l.r, key: l.r.prefix + "cap:" + key, member: l.r.replica + "/" + hex.EncodeToString(b[:])}
	n, err := acquireScript.Run(ctx, l.r.rdb, []string{h.key}, limit, hold.Milliseconds(), h.member).Int()
	if err != nil {
		return nil, false, unavailable(err)
	}
	if n == 0 {
		return nil, false, nil
	}
	return h, true, nil
}

func (l redisLimiter) Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	left, err := allowScript.Run(ctx, l.r.rdb, []string{l.r.prefix + "rate:" + key}, limit, window.Milliseconds()).Int64()
	if err != nil {
		return false, 0, unavailable(err)
	}
	if left < 0 {
		return true, 0, nil
	}
	return false, time.Duration(left) * time.Millisecond, nil
}

type redisHold struct {
	r           *Redis
	key, member string
	once        sync.Once
}

func (h *redisHold) Renew(ctx context.Context, hold time.Duration) (bool, error) {
	n, err := renewScript.Run(ctx, h.r.rdb, []string{h.key}, strconv.FormatInt(hold.Milliseconds(), 10), h.member).Int()
	if err != nil {
		return false, unavailable(err)
	}
	return n == 1, nil
}

func (h *redisHold) Release(ctx context.Context) error {
	var err error
	h.once.Do(func() { err = unavailable(h.r.rdb.ZRem(ctx, h.key, h.member).Err()) })
	return err
}

// limiterTimeout bounds a call to the Limiter from the Manager.
const limiterTimeout = 3 * time.Second

// activeKey is the Limiter key of the cap on the tasks active in all
// (MaxActive); a principal's keys start with "tasks:".
const activeKey = "active-tasks"

// acquire takes a place under the Limiter for a task of owner: one under
// MaxActive (key activeKey) and one under MaxPerOwner (key "tasks:" +
// owner). It returns nil and a *LimitError when a cap is reached, nil and
// the error when they cannot be counted.
func (m *Manager) acquire(owner string) (Hold, error) {
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
type holds []Hold

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

func (m *Manager) releaseHold(h Hold) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	if err := h.Release(ctx); err != nil {
		m.log.Warn("tasks: cannot give back a place under the per-client cap; it returns after the lease", "err", err)
	}
}

// renewHolds keeps the places of the tasks active here.
func (m *Manager) renewHolds(ctx context.Context) {
	m.mu.Lock()
	var hs []Hold
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
