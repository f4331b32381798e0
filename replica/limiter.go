package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/wasmcp/wasmcp/internal/limiter"
)

// Limiter returns the Limiter counted in this Redis, shared by every
// replica using the same key prefix. Places are members of a sorted set
// per key scored by their expiry (Redis's clock, not the replicas');
// windows are counters that expire with the window.
func (r *Redis) Limiter() limiter.Limiter { return redisLimiter{r} }

type redisLimiter struct{ r *Redis }

// acquireScript: KEYS: the key's set. ARGV: limit, hold ms, member.
var acquireScript = redis.NewScript(1, `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`)

// renewScript: KEYS: the key's set. ARGV: hold ms, member.
var renewScript = redis.NewScript(1, `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('ZSCORE', KEYS[1], ARGV[2])
if not s or tonumber(s) <= now then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`)

// allowScript: KEYS: the window's counter. ARGV: limit, window ms.
var allowScript = redis.NewScript(1, `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); left = tonumber(ARGV[2]) end
  return left
end
return -1
`)

func (l redisLimiter) Acquire(ctx context.Context, key string, limit int, hold time.Duration) (limiter.Hold, bool, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	h := &redisHold{r: l.r, key: l.r.prefix + "cap:" + key, member: l.r.replica + "/" + hex.EncodeToString(b[:])}
	n, err := redis.Int(l.r.run(ctx, acquireScript, h.key, limit, hold.Milliseconds(), h.member))
	if err != nil {
		return nil, false, unavailable(err)
	}
	if n == 0 {
		return nil, false, nil
	}
	return h, true, nil
}

func (l redisLimiter) Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	left, err := redis.Int64(l.r.run(ctx, allowScript, l.r.prefix+"rate:"+key, limit, window.Milliseconds()))
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
	n, err := redis.Int(h.r.run(ctx, renewScript, h.key, strconv.FormatInt(hold.Milliseconds(), 10), h.member))
	if err != nil {
		return false, unavailable(err)
	}
	return n == 1, nil
}

func (h *redisHold) Release(ctx context.Context) error {
	var err error
	h.once.Do(func() {
		_, err = h.r.do(ctx, "ZREM", h.key, h.member)
		err = unavailable(err)
	})
	return err
}
