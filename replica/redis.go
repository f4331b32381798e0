package replica

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

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
	pool    *redis.Pool
	cfg     *config
	prefix  string
	replica string
	log     *slog.Logger
	closed  atomic.Bool
	life    context.Context // done when the store is closed: ends the subscriptions
	end     context.CancelFunc
}

// Options configure Open beyond its URL.
type Options struct {
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// Open connects to the Redis server of rawURL:
// redis://[user:password@]host[:port][/db], rediss:// for TLS or
// unix://[user:password@]/path/to/socket, with options as query
// parameters (the names of go-redis: dial_timeout, read_timeout,
// write_timeout, pool_size, pool_timeout, max_idle_conns,
// conn_max_idle_time, conn_max_lifetime, max_retries, client_name, db,
// skip_verify), plus key_prefix=P to change DefaultKeyPrefix (replicas
// sharing tasks must use the same prefix). An unknown option is an
// error. It checks the server answers.
func Open(ctx context.Context, rawURL string, o Options) (*Redis, error) {
	cfg, err := parseURL(rawURL)
	if err != nil {
		// Never echo the URL: it may hold a password.
		return nil, fmt.Errorf("tasks: redis URL: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	r := &Redis{pool: newPool(cfg), cfg: cfg, prefix: cfg.prefix, replica: hex.EncodeToString(id[:]), log: log}
	r.life, r.end = context.WithCancel(context.Background())
	if _, err := r.do(ctx, "PING"); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("tasks: redis at %s: %w", cfg.addr, unavailable(err))
	}
	return r, nil
}

// conn takes a connection from the pool, waiting at most pool_timeout
// for one to be free.
func (r *Redis) conn(ctx context.Context) (redis.Conn, error) {
	if r.closed.Load() {
		return nil, tasks.ErrClosed
	}
	// pool_timeout bounds the wait for a free connection. No timer is
	// set when the caller's deadline comes first, or when at least two
	// connections are free (then only concurrent callers taking both at
	// once could make this one wait, on its own context).
	if dl, ok := ctx.Deadline(); r.cfg.poolTimeout > 0 && (!ok || time.Until(dl) > r.cfg.poolTimeout) &&
		r.pool.ActiveCount() >= r.cfg.poolSize-1 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.cfg.poolTimeout)
		defer cancel()
	}
	c, err := r.pool.GetContext(ctx)
	if err != nil {
		if r.closed.Load() {
			return nil, tasks.ErrClosed
		}
		return nil, err
	}
	return c, nil
}

// with runs f on a pooled connection, again on another (up to
// max_retries times) when the connection broke under it.
func (r *Redis) with(ctx context.Context, f func(redis.Conn) (any, error)) (any, error) {
	for try := 0; ; try++ {
		c, err := r.conn(ctx)
		if err != nil {
			return nil, err
		}
		v, err := f(c)
		_ = c.Close()
		if try < r.cfg.maxRetries && retryable(err) && ctx.Err() == nil {
			continue
		}
		return v, err
	}
}

// do sends one command and returns its reply.
func (r *Redis) do(ctx context.Context, cmd string, args ...any) (any, error) {
	return r.with(ctx, func(c redis.Conn) (any, error) { return redis.DoContext(c, ctx, cmd, args...) })
}

// run runs a script by EVALSHA, loading it by EVAL when the server does
// not know it yet (after a restart or a SCRIPT FLUSH).
func (r *Redis) run(ctx context.Context, s *redis.Script, keysAndArgs ...any) (any, error) {
	return r.with(ctx, func(c redis.Conn) (any, error) { return s.DoContext(ctx, c, keysAndArgs...) })
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

// Addr is the address of the server: host:port, or the socket's path.
func (r *Redis) Addr() string { return r.cfg.addr }

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
var createScript = redis.NewScript(3, `
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
	n, err := redis.Int(r.run(ctx, createScript, r.taskKey(t.ID), r.ownerKey(t.Owner), r.runningKey(),
		rec, t.OrderKey(), expireAt(t), t.ID, runner, r.channel(), r.message(rec)))
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
	v, err := redis.Bytes(r.do(ctx, "GET", r.taskKey(id)))
	if errors.Is(err, redis.ErrNil) {
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

// errTxFailed says a watched key changed before EXEC: the transaction is
// tried again.
var errTxFailed = errors.New("tasks: redis transaction lost to a concurrent writer")

// watch runs one optimistic transaction on a connection of its own: key
// is watched, f reads through c and queues its writes with c.Send after
// MULTI, and EXEC applies them only if nobody wrote key in between
// (else errTxFailed). Closing the connection unwatches it.
func (r *Redis) watch(ctx context.Context, key string, f func(c redis.Conn) (queued bool, err error)) error {
	var c redis.Conn
	// Only WATCH is sent again on another connection when the first one
	// broke: nothing was read or written yet.
	for try := 0; ; try++ {
		var err error
		if c, err = r.conn(ctx); err != nil {
			return err
		}
		if _, err = redis.DoContext(c, ctx, "WATCH", key); err == nil {
			break
		}
		_ = c.Close()
		if try >= r.cfg.maxRetries || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	defer c.Close()
	queued, err := f(c)
	if err != nil || !queued {
		return err
	}
	v, err := redis.DoContext(c, ctx, "EXEC")
	if err == nil && v == nil {
		err = errTxFailed
	}
	return err
}

// Update implements tasks.Store with an optimistic transaction: the record is
// watched, changed by fn and written back only if nobody wrote it in
// between (else the whole read-modify-write is retried). The same
// transaction keeps the running hash and publishes the change.
func (r *Redis) Update(ctx context.Context, id string, fn func(*tasks.Task) error) (*tasks.Task, error) {
	key := r.taskKey(id)
	var out *tasks.Task
	txf := func(c redis.Conn) (bool, error) {
		v, err := redis.Bytes(redis.DoContext(c, ctx, "GET", key))
		if errors.Is(err, redis.ErrNil) {
			return false, tasks.ErrNotFound
		}
		if err != nil {
			return false, err
		}
		t, err := decode(id, v)
		if err != nil {
			return false, fnError{err}
		}
		before, ttl := t.Status, t.TTL
		owner, created := t.Owner, t.CreatedAt
		if err := fn(t); err != nil {
			return false, fnError{err}
		}
		t.ID, t.Owner, t.CreatedAt = id, owner, created
		rec, err := json.Marshal(t)
		if err != nil {
			return false, fnError{fmt.Errorf("tasks: encode %s: %w", id, err)}
		}
		err = c.Send("MULTI")
		if t.TTL == ttl {
			err = errors.Join(err, c.Send("SET", key, rec, "KEEPTTL"))
		} else {
			err = errors.Join(err, c.Send("SET", key, rec))
			if exp := expireAt(t); exp > 0 {
				err = errors.Join(err, c.Send("PEXPIREAT", key, exp))
			}
		}
		switch {
		case runsHere(t) && t.Status != before && t.Status == tasks.Working:
			err = errors.Join(err, c.Send("HSET", r.runningKey(), id, r.replica))
		case !runsHere(t):
			err = errors.Join(err, c.Send("HDEL", r.runningKey(), id))
		}
		if t.Status != before || t.Status == tasks.InputRequired {
			err = errors.Join(err, c.Send("PUBLISH", r.channel(), r.message(rec)))
		}
		if err != nil {
			return false, err
		}
		out = t
		return true, nil
	}
	for range maxTxRetries {
		err := r.watch(ctx, key, txf)
		if errors.Is(err, errTxFailed) {
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
		err := r.watch(ctx, key, func(c redis.Conn) (bool, error) {
			v, err := redis.Bytes(redis.DoContext(c, ctx, "GET", key))
			if errors.Is(err, redis.ErrNil) {
				_, err = redis.DoContext(c, ctx, "HDEL", r.runningKey(), id)
				return false, err
			}
			if err != nil {
				return false, err
			}
			t, derr := decode(id, v)
			err = errors.Join(c.Send("MULTI"), c.Send("DEL", key))
			if derr == nil {
				err = errors.Join(err, c.Send("ZREM", r.ownerKey(t.Owner), t.OrderKey()))
			}
			return true, errors.Join(err, c.Send("HDEL", r.runningKey(), id))
		})
		if errors.Is(err, errTxFailed) {
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
		keys, err := redis.Strings(r.do(ctx, "ZRANGEBYLEX", okey, min, "+", "LIMIT", 0, want))
		if err != nil {
			return nil, unavailable(err)
		}
		if len(keys) == 0 {
			break
		}
		tkeys := make([]any, len(keys))
		for i, k := range keys {
			if len(k) < 16 {
				return nil, fmt.Errorf("tasks: the index of %q holds a malformed entry %q", owner, k)
			}
			tkeys[i] = r.taskKey(k[16:])
		}
		vals, err := redis.ByteSlices(r.do(ctx, "MGET", tkeys...))
		if err != nil {
			return nil, unavailable(err)
		}
		gone := []any{okey}
		for i, v := range vals {
			if v == nil {
				gone = append(gone, keys[i])
				continue
			}
			t, err := decode(keys[i][16:], v)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		if len(gone) > 1 {
			_, _ = r.do(ctx, "ZREM", gone...)
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
	cursor := "0"
	for {
		page, err := redis.Values(r.do(ctx, "SCAN", cursor, "MATCH", r.prefix+"task:*", "COUNT", 500))
		if err != nil {
			return unavailable(err)
		}
		var keys []string
		if _, err := redis.Scan(page, &cursor, &keys); err != nil {
			return unavailable(err)
		}
		for len(keys) > 0 {
			n := min(len(keys), 500)
			more, err := r.scanBatch(ctx, keys[:n], fn)
			if !more || err != nil {
				return err
			}
			keys = keys[n:]
		}
		if cursor == "0" {
			return nil
		}
	}
}

// scanBatch reads the records of keys and hands them to fn; false when fn
// asked to stop.
func (r *Redis) scanBatch(ctx context.Context, keys []string, fn func(*tasks.Task) bool) (bool, error) {
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	vals, err := redis.ByteSlices(r.do(ctx, "MGET", args...))
	if err != nil {
		return false, unavailable(err)
	}
	for i, v := range vals {
		if v == nil {
			continue
		}
		t, err := decode(strings.TrimPrefix(keys[i], r.prefix+"task:"), v)
		if err != nil {
			return false, err
		}
		if !fn(t) {
			return false, nil
		}
	}
	return true, nil
}

// decode reads a stored record.
func decode(id string, v []byte) (*tasks.Task, error) {
	var t tasks.Task
	if err := json.Unmarshal(v, &t); err != nil {
		return nil, fmt.Errorf("tasks: record %s is corrupt: %w", id, err)
	}
	return &t, nil
}

// Close implements tasks.Store. It ends the subscriptions too.
func (r *Redis) Close() error {
	r.closed.Store(true)
	r.end()
	return r.pool.Close()
}

// Renew implements tasks.Shared: this replica's lease lasts ttl more.
func (r *Redis) Renew(ctx context.Context, ttl time.Duration) error {
	_, err := r.do(ctx, "SET", r.leaseKey(r.replica), strconv.FormatInt(time.Now().UnixMilli(), 10), "PX", max(ttl.Milliseconds(), 1))
	return unavailable(err)
}

// Drop implements tasks.Shared: this replica's lease ends now (at shutdown).
func (r *Redis) Drop(ctx context.Context) error {
	_, err := r.do(ctx, "DEL", r.leaseKey(r.replica))
	return unavailable(err)
}

// orphansScript lists the running tasks whose replica holds no lease
// (and forgets those whose record is gone). KEYS: running hash. ARGV:
// lease key prefix, task key prefix.
var orphansScript = redis.NewScript(1, `
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
	v, err := redis.Strings(r.run(ctx, orphansScript, r.runningKey(), r.prefix+"replica:", r.prefix+"task:"))
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
var claimScript = redis.NewScript(2, `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`)

// Claim implements tasks.Shared: this replica takes over task id from replica
// dead if dead still runs it and still holds no lease.
func (r *Redis) Claim(ctx context.Context, id, dead string) (bool, error) {
	n, err := redis.Int(r.run(ctx, claimScript, r.runningKey(), r.leaseKey(dead), id, dead, r.replica))
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
	return r.Subscribe(ctx, r.channel(), func(msg []byte) {
		from, rec, found := bytes.Cut(msg, []byte("\n"))
		if !found || string(from) == r.replica {
			return
		}
		var t tasks.Task
		if err := json.Unmarshal(rec, &t); err != nil {
			r.log.Warn("tasks: unreadable change from another replica", "replica", string(from), "err", err)
			return
		}
		fn(&t)
	})
}

// SharedKey returns a secret of n random bytes shared by every replica
// under name: the first replica to ask creates it, the others read it.
func (r *Redis) SharedKey(ctx context.Context, name string, n int) ([]byte, error) {
	key := r.prefix + "secret:" + name
	b := make([]byte, n)
	_, _ = rand.Read(b)
	if _, err := r.do(ctx, "SET", key, b, "NX"); err != nil {
		return nil, unavailable(err)
	}
	v, err := redis.Bytes(r.do(ctx, "GET", key))
	if err != nil {
		return nil, unavailable(err)
	}
	if len(v) < n {
		return nil, fmt.Errorf("tasks: shared secret %s in redis has %d bytes; want %d", key, len(v), n)
	}
	return v, nil
}
