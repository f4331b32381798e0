package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/tasks"
)

// ErrUnavailable wraps the errors of a shared store that cannot be reached.
var ErrUnavailable = errors.New("tasks: the shared task store (Redis) is unavailable")

// DefaultKeyPrefix is the prefix of every Redis key the store uses.
const DefaultKeyPrefix = "wasmcp:"

// Redis is a tasks.Store in Redis, shared by every replica that opens the same
// server and key prefix. Records are JSON strings that expire with the
// task's TTL; an owner's tasks are a sorted set of order keys; a hash names
// the replica running each working task, and each replica keeps a lease
// key alive while it runs (see tasks.Manager). Changes are published on a
// channel so that the other replicas wake their waiters, stop a cancelled
// task's guest and notify their listeners.
//
// Keys (prefix P): P task:ID, P owner:OWNER, P running, P replica:ID,
// channel P changes. The multi-key operations assume one Redis server (or
// a primary with replicas), not a Redis Cluster.
type Redis struct {
	rdb     *redis.Client
	prefix  string
	replica string
	log     *slog.Logger
}

// Options configure Open beyond its URL.
type Options struct {
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// Open connects to the Redis server of rawURL:
// redis://[user:password@]host[:port][/db] or rediss:// for TLS (any
// go-redis option as a query parameter, e.g. dial_timeout=2s), plus
// key_prefix=P to change DefaultKeyPrefix (replicas sharing tasks must
// use the same prefix). It checks the server answers.
func Open(ctx context.Context, rawURL string, o Options) (*Redis, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the URL, which may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("tasks: redis URL: %w", err)
	}
	q := u.Query()
	prefix := DefaultKeyPrefix
	if q.Has("key_prefix") {
		prefix = q.Get("key_prefix")
		q.Del("key_prefix")
		u.RawQuery = q.Encode()
	}
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		// Never echo the URL: it may hold a password.
		return nil, fmt.Errorf("tasks: redis URL: %w", err)
	}
	// Fail fast when the server is gone: task operations then answer a
	// clear error instead of hanging, and recover when it returns.
	if !q.Has("dial_timeout") {
		opts.DialTimeout = 2 * time.Second
	}
	if !q.Has("read_timeout") {
		opts.ReadTimeout = 2 * time.Second
	}
	if !q.Has("write_timeout") {
		opts.WriteTimeout = 2 * time.Second
	}
	if !q.Has("max_retries") {
		opts.MaxRetries = 1
	}
	opts.DisableIdentity = true
	quietRedis.Do(func() { redis.SetLogger(debugLog{}) })
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	r := &Redis{rdb: redis.NewClient(opts), prefix: prefix, replica: hex.EncodeToString(id[:]), log: log}
	if err := r.rdb.Ping(ctx).Err(); err != nil {
		_ = r.rdb.Close()
		return nil, fmt.Errorf("tasks: redis at %s: %w", opts.Addr, unavailable(err))
	}
	return r, nil
}

// quietRedis routes go-redis's own messages (a dial failure per retry
// during an outage) to slog at debug level; the store reports outages
// itself.
var quietRedis sync.Once

type debugLog struct{}

func (debugLog) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// unavailable marks an error that is not a reply of the server as
// ErrUnavailable.
func unavailable(err error) error {
	var re redis.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tasks.ErrNotFound), errors.Is(err, tasks.ErrExists), errors.Is(err, tasks.ErrTerminal), errors.Is(err, tasks.ErrClosed):
		return err
	case errors.Is(err, redis.ErrClosed):
		return tasks.ErrClosed
	case errors.As(err, &re) && !transient(re.Error()):
		return fmt.Errorf("tasks: redis: %w", err)
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// transient reports whether a reply of the server says it cannot serve
// for now (loading its data after a restart, a replica without its
// primary, a busy script).
func transient(msg string) bool {
	for _, p := range []string{"LOADING ", "MASTERDOWN ", "BUSY ", "TRYAGAIN ", "CLUSTERDOWN "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// Replica is this process's id among the replicas (random per process).
func (r *Redis) Replica() string { return r.replica }

// Client is the underlying Redis client, for other shared state of the
// server (see Counter).
func (r *Redis) Client() *redis.Client { return r.rdb }

// Prefix is the key prefix.
func (r *Redis) Prefix() string { return r.prefix }

func (r *Redis) taskKey(id string) string     { return r.prefix + "task:" + id }
func (r *Redis) ownerKey(owner string) string { return r.prefix + "owner:" + owner }
func (r *Redis) runningKey() string           { return r.prefix + "running" }
func (r *Redis) leaseKey(rid string) string   { return r.prefix + "replica:" + rid }
func (r *Redis) channel() string              { return r.prefix + "changes" }

// expireAt is the Redis expiry of a task in Unix milliseconds, 0 for none.
func expireAt(t *tasks.Task) int64 {
	if t.TTL <= 0 {
		return 0
	}
	return t.ExpiresAt().UnixMilli()
}

// runsHere reports whether a task in this state has a guest that runs (or
// waits on a client connection) in the replica that moved it there.
func runsHere(t *tasks.Task) bool {
	return t.Status == tasks.Working || (t.Status == tasks.InputRequired && t.Era != contract.Modern)
}

// createScript stores a new record, indexes it under its owner (the
// owner's set expires with its last task) and records the running
// replica. KEYS: task, owner set, running hash. ARGV: record, order key,
// expiry ms (0 none), id, replica ("" none), channel, message.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
local exp = tonumber(ARGV[3])
if exp > 0 then redis.call('PEXPIREAT', KEYS[1], exp) end
local existed = redis.call('EXISTS', KEYS[2])
local cur = redis.call('PEXPIRETIME', KEYS[2])
redis.call('ZADD', KEYS[2], 0, ARGV[2])
if exp == 0 then
  redis.call('PERSIST', KEYS[2])
elseif existed == 0 or (cur >= 0 and cur < exp) then
  redis.call('PEXPIREAT', KEYS[2], exp)
end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[4], ARGV[5]) end
redis.call('PUBLISH', ARGV[6], ARGV[7])
return 1
`)

// message is what the store publishes for a change: the replica that made
// it, a newline, the record.
func (r *Redis) message(rec []byte) string {
	b := make([]byte, 0, len(r.replica)+1+len(rec))
	b = append(b, r.replica...)
	b = append(b, '\n')
	return string(append(b, rec...))
}

// Create implements tasks.Store.
func (r *Redis) Create(ctx context.Context, t *tasks.Task) error {
	rec, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("tasks: encode %s: %w", t.ID, err)
	}
	runner := ""
	if runsHere(t) {
		runner = r.replica
	}
	n, err := createScript.Run(ctx, r.rdb, []string{r.taskKey(t.ID), r.ownerKey(t.Owner), r.runningKey()},
		rec, t.OrderKey(), expireAt(t), t.ID, runner, r.channel(), r.message(rec)).Int()
	if err != nil {
		return unavailable(err)
	}
	if n == 0 {
		return tasks.ErrExists
	}
	return nil
}

// Get implements tasks.Store.
func (r *Redis) Get(ctx context.Context, id string) (*tasks.Task, error) {
	v, err := r.rdb.Get(ctx, r.taskKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, tasks.ErrNotFound
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return decode(id, v)
}

// maxTxRetries bounds the optimistic retries of an Update that keeps
// losing to concurrent writers of the same task.
const maxTxRetries = 1000

// Update implements tasks.Store with an optimistic transaction: the record is
// watched, changed by fn and written back only if nobody wrote it in
// between (else the whole read-modify-write is retried). The same
// transaction keeps the running hash and publishes the change.
func (r *Redis) Update(ctx context.Context, id string, fn func(*tasks.Task) error) (*tasks.Task, error) {
	key := r.taskKey(id)
	var out *tasks.Task
	txf := func(tx *redis.Tx) error {
		v, err := tx.Get(ctx, key).Bytes()
		if errors.Is(err, redis.Nil) {
			return tasks.ErrNotFound
		}
		if err != nil {
			return err
		}
		t, err := decode(id, v)
		if err != nil {
			return fnError{err}
		}
		before, ttl := t.Status, t.TTL
		owner, created := t.Owner, t.CreatedAt
		if err := fn(t); err != nil {
			return fnError{err}
		}
		t.ID, t.Owner, t.CreatedAt = id, owner, created
		rec, err := json.Marshal(t)
		if err != nil {
			return fnError{fmt.Errorf("tasks: encode %s: %w", id, err)}
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if t.TTL == ttl {
				p.SetArgs(ctx, key, rec, redis.SetArgs{KeepTTL: true})
			} else {
				p.Set(ctx, key, rec, 0)
				if exp := expireAt(t); exp > 0 {
					p.PExpireAt(ctx, key, time.UnixMilli(exp))
				}
			}
			switch {
			case runsHere(t) && t.Status != before && t.Status == tasks.Working:
				p.HSet(ctx, r.runningKey(), id, r.replica)
			case !runsHere(t):
				p.HDel(ctx, r.runningKey(), id)
			}
			if t.Status != before || t.Status == tasks.InputRequired {
				p.Publish(ctx, r.channel(), r.message(rec))
			}
			return nil
		})
		out = t
		return err
	}
	for range maxTxRetries {
		err := r.rdb.Watch(ctx, txf, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		var fe fnError
		if errors.As(err, &fe) {
			return nil, fe.err
		}
		if err != nil {
			return nil, unavailable(err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("tasks: update %s: too much contention", id)
}

// fnError carries the error of an Update's fn through the transaction.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// Delete implements tasks.Store.
func (r *Redis) Delete(ctx context.Context, id string) error {
	key := r.taskKey(id)
	for range maxTxRetries {
		err := r.rdb.Watch(ctx, func(tx *redis.Tx) error {
			v, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				_, err = tx.HDel(ctx, r.runningKey(), id).Result()
				return err
			}
			if err != nil {
				return err
			}
			t, derr := decode(id, v)
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Del(ctx, key)
				if derr == nil {
					p.ZRem(ctx, r.ownerKey(t.Owner), t.OrderKey())
				}
				p.HDel(ctx, r.runningKey(), id)
				return nil
			})
			return err
		}, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		return unavailable(err)
	}
	return fmt.Errorf("tasks: delete %s: too much contention", id)
}

// List implements tasks.Store. Index entries of expired records are dropped on
// the way.
func (r *Redis) List(ctx context.Context, owner, after string, limit int) ([]*tasks.Task, error) {
	okey := r.ownerKey(owner)
	var out []*tasks.Task
	min := "-"
	if after != "" {
		min = "(" + after
	}
	for len(out) < limit {
		want := limit - len(out)
		keys, err := r.rdb.ZRangeByLex(ctx, okey, &redis.ZRangeBy{Min: min, Max: "+", Count: int64(want)}).Result()
		if err != nil {
			return nil, unavailable(err)
		}
		if len(keys) == 0 {
			break
		}
		tkeys := make([]string, len(keys))
		for i, k := range keys {
			tkeys[i] = r.taskKey(k[16:])
		}
		vals, err := r.rdb.MGet(ctx, tkeys...).Result()
		if err != nil {
			return nil, unavailable(err)
		}
		var gone []any
		for i, v := range vals {
			s, ok := v.(string)
			if !ok {
				gone = append(gone, keys[i])
				continue
			}
			t, err := decode(keys[i][16:], []byte(s))
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		if len(gone) > 0 {
			_ = r.rdb.ZRem(ctx, okey, gone...).Err()
		}
		min = "(" + keys[len(keys)-1]
		if len(keys) < want {
			break
		}
	}
	return out, nil
}

// Scan implements tasks.Store: every record under the prefix, by SCAN.
func (r *Redis) Scan(ctx context.Context, fn func(*tasks.Task) bool) error {
	it := r.rdb.Scan(ctx, 0, r.prefix+"task:*", 500).Iterator()
	var batch []string
	flush := func() (bool, error) {
		if len(batch) == 0 {
			return true, nil
		}
		vals, err := r.rdb.MGet(ctx, batch...).Result()
		if err != nil {
			return false, unavailable(err)
		}
		for i, v := range vals {
			s, ok := v.(string)
			if !ok {
				continue
			}
			t, err := decode(strings.TrimPrefix(batch[i], r.prefix+"task:"), []byte(s))
			if err != nil {
				return false, err
			}
			if !fn(t) {
				return false, nil
			}
		}
		batch = batch[:0]
		return true, nil
	}
	for it.Next(ctx) {
		batch = append(batch, it.Val())
		if len(batch) == 500 {
			if more, err := flush(); !more || err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return unavailable(err)
	}
	_, err := flush()
	return err
}

// decode reads a stored record.
func decode(id string, v []byte) (*tasks.Task, error) {
	var t tasks.Task
	if err := json.Unmarshal(v, &t); err != nil {
		return nil, fmt.Errorf("tasks: record %s is corrupt: %w", id, err)
	}
	return &t, nil
}

// Close implements tasks.Store.
func (r *Redis) Close() error { return r.rdb.Close() }

// Renew implements tasks.Shared: this replica's lease lasts ttl more.
func (r *Redis) Renew(ctx context.Context, ttl time.Duration) error {
	return unavailable(r.rdb.Set(ctx, r.leaseKey(r.replica), strconv.FormatInt(time.Now().UnixMilli(), 10), ttl).Err())
}

// Drop implements tasks.Shared: this replica's lease ends now (at shutdown).
func (r *Redis) Drop(ctx context.Context) error {
	return unavailable(r.rdb.Del(ctx, r.leaseKey(r.replica)).Err())
}

// orphansScript lists the running tasks whose replica holds no lease
// (and forgets those whose record is gone). KEYS: running hash. ARGV:
// lease key prefix, task key prefix.
var orphansScript = redis.NewScript(`
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local id, rid = all[i], all[i+1]
  if redis.call('EXISTS', ARGV[2] .. id) == 0 then
    redis.call('HDEL', KEYS[1], id)
  elseif redis.call('EXISTS', ARGV[1] .. rid) == 0 then
    table.insert(out, id)
    table.insert(out, rid)
  end
end
return out
`)

// Orphans implements tasks.Shared: running tasks whose replica's lease
// expired, by id, with that replica.
func (r *Redis) Orphans(ctx context.Context) (map[string]string, error) {
	v, err := orphansScript.Run(ctx, r.rdb, []string{r.runningKey()}, r.prefix+"replica:", r.prefix+"task:").StringSlice()
	if err != nil {
		return nil, unavailable(err)
	}
	out := make(map[string]string, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		out[v[i]] = v[i+1]
	}
	return out, nil
}

// claimScript takes over a running task from a replica whose lease is
// still missing. KEYS: running hash, dead replica's lease. ARGV: id, dead
// replica, this replica.
var claimScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`)

// Claim implements tasks.Shared: this replica takes over task id from replica
// dead if dead still runs it and still holds no lease.
func (r *Redis) Claim(ctx context.Context, id, dead string) (bool, error) {
	n, err := claimScript.Run(ctx, r.rdb, []string{r.runningKey(), r.leaseKey(dead)}, id, dead, r.replica).Int()
	if err != nil {
		return false, unavailable(err)
	}
	return n == 1, nil
}

// Watch implements tasks.Shared: it subscribes to the changes of the other
// replicas (waiting up to a few seconds for the subscription to be
// confirmed, so that no change made after Watch returns is missed), then
// calls fn with each until ctx is done. The subscription reconnects by
// itself after an outage (changes made meanwhile are not replayed; the
// Manager's waiters poll as well); an error says the first subscription
// failed, and delivery starts when Redis answers.
func (r *Redis) Watch(ctx context.Context, fn func(*tasks.Task)) (<-chan struct{}, error) {
	ps := r.rdb.Subscribe(ctx, r.channel())
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err := ps.Receive(sctx)
	cancel()
	ch := ps.Channel(redis.WithChannelSize(1024))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case msg, ok := <-ch:
				if !ok {
					return
				}
				from, rec, found := strings.Cut(msg.Payload, "\n")
				if !found || from == r.replica {
					continue
				}
				var t tasks.Task
				if err := json.Unmarshal([]byte(rec), &t); err != nil {
					r.log.Warn("tasks: unreadable change from another replica", "replica", from, "err", err)
					continue
				}
				fn(&t)
			}
		}
	}()
	return done, unavailable(err)
}

// SharedKey returns a secret of n random bytes shared by every replica
// under name: the first replica to ask creates it, the others read it.
func (r *Redis) SharedKey(ctx context.Context, name string, n int) ([]byte, error) {
	key := r.prefix + "secret:" + name
	b := make([]byte, n)
	_, _ = rand.Read(b)
	if err := r.rdb.SetNX(ctx, key, b, 0).Err(); err != nil {
		return nil, unavailable(err)
	}
	v, err := r.rdb.Get(ctx, key).Bytes()
	if err != nil {
		return nil, unavailable(err)
	}
	if len(v) < n {
		return nil, fmt.Errorf("tasks: shared secret %s in redis has %d bytes; want %d", key, len(v), n)
	}
	return v, nil
}
