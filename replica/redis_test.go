package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/limiter/limitertest"
	"github.com/wasmcp/wasmcp/internal/testkit/redistest"
	"github.com/wasmcp/wasmcp/tasks"
	"github.com/wasmcp/wasmcp/tasks/taskstest"
)

// openRedis opens the store on url, closed at the end of the test.
func openRedis(t *testing.T, url string) *Redis {
	t.Helper()
	r, err := Open(context.Background(), url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// tasks.Task TTLs are Redis expiries: an expired record is gone, its index entry
// is dropped by List without shortening a page, and a TTL changed by
// Update moves the expiry.
func TestRedisExpiry(t *testing.T) {
	srv := redistest.Start(t, false)
	s := openRedis(t, srv.URL())
	ctx := context.Background()
	now := time.Now()
	for i := 0; i < 5; i++ {
		tk := taskstest.NewTask(fmt.Sprintf("a%d", i), "alice", now.Add(time.Duration(i)*time.Millisecond))
		if i == 1 || i == 2 {
			tk.TTL = 300 * time.Millisecond
		}
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	pttl, err := pttlOf(ctx, s, s.taskKey("a1"))
	if err != nil || pttl <= 0 || pttl > 300*time.Millisecond {
		t.Fatalf("expiry of a1: %v %v", pttl, err)
	}
	up, err := s.Update(ctx, "a2", func(t *tasks.Task) error { t.TTL = time.Hour; return nil })
	if err != nil || up.TTL != time.Hour {
		t.Fatalf("update ttl: %v", err)
	}
	if pttl, _ := pttlOf(ctx, s, s.taskKey("a2")); pttl < 59*time.Minute {
		t.Fatalf("expiry of a2 after its TTL changed: %v", pttl)
	}
	// An update that keeps the TTL keeps the expiry.
	if _, err := s.Update(ctx, "a1", func(t *tasks.Task) error { t.StatusMessage = "x"; return nil }); err != nil {
		t.Fatal(err)
	}
	if pttl, _ := pttlOf(ctx, s, s.taskKey("a1")); pttl <= 0 || pttl > 300*time.Millisecond {
		t.Fatalf("expiry of a1 after an update: %v", pttl)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := s.Get(ctx, "a1"); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("expired task: %v", err)
	}
	page, err := s.List(ctx, "alice", "", 2)
	if err != nil || len(page) != 2 || page[0].ID != "a0" || page[1].ID != "a2" {
		t.Fatalf("first page: %v %v", ids(page), err)
	}
	page, err = s.List(ctx, "alice", page[1].OrderKey(), 2)
	if err != nil || fmt.Sprint(ids(page)) != "[a3 a4]" {
		t.Fatalf("second page: %v %v", ids(page), err)
	}
	if n, _ := redis.Int(s.do(ctx, "ZCARD", s.ownerKey("alice"))); n != 4 {
		t.Fatalf("owner index keeps %d entries, want 4", n)
	}
	if pttl, _ := pttlOf(ctx, s, s.ownerKey("alice")); pttl < 59*time.Minute {
		t.Fatalf("the owner index expires before its last task: %v", pttl)
	}
}

// pttlOf is the time key has left to live.
func pttlOf(ctx context.Context, r *Redis, key string) (time.Duration, error) {
	ms, err := redis.Int64(r.do(ctx, "PTTL", key))
	return time.Duration(ms) * time.Millisecond, err
}

func ids(ts []*tasks.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// Updates of one task from two replicas (two clients, two connection
// pools) lose nothing.
func TestRedisUpdateAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t, false)
	a, b := openRedis(t, srv.URL()), openRedis(t, srv.URL())
	ctx := context.Background()
	if err := a.Create(ctx, taskstest.NewTask("x", "", time.Now())); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Update(ctx, "x", func(t *tasks.Task) error {
				t.TTL += time.Millisecond
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, _ := b.Get(ctx, "x")
	if got.TTL != time.Hour+40*time.Millisecond {
		t.Fatalf("lost updates: ttl %s", got.TTL)
	}
}

func TestRedisURL(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	s := openRedis(t, srv.URL()+"/3?key_prefix=p1:&dial_timeout=1s")
	if s.Prefix() != "p1:" || s.cfg.db != 3 {
		t.Fatalf("prefix %q db %d", s.Prefix(), s.cfg.db)
	}
	if _, err := Open(ctx, "redis://127.0.0.1:1?bogus=1", Options{}); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("unknown option: %v", err)
	}
	_, err := Open(ctx, "redis://user:s3cret@127.0.0.1:1", Options{})
	if !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("unreachable server: %v", err)
	}
	if _, err := Open(ctx, "http://127.0.0.1", Options{}); err == nil {
		t.Fatal("an http URL was accepted")
	}
}

// replica is a tasks.Manager on its own connection to srv, as another process
// would have.
func newReplica(t *testing.T, srv *redistest.Server, opts tasks.Options) *tasks.Manager {
	t.Helper()
	return taskstest.NewManager(t, openRedis(t, srv.URL()), opts)
}

// A task created on one replica is read, waited for, cancelled and
// observed on another; the cancellation stops the guest where it runs.
func TestRedisReplicas(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	a, b := newReplica(t, srv, tasks.Options{}), newReplica(t, srv, tasks.Options{})
	seen := make(chan *tasks.Task, 16)
	b.OnChange(func(t *tasks.Task) { seen <- t })
	stopped := make(chan error, 1)
	tk := taskstest.Create(t, a, "alice", func(cause error) { stopped <- cause })
	if got := <-seen; got.ID != tk.ID || got.Status != tasks.Working {
		t.Fatalf("b observed %+v", got)
	}
	if _, err := b.Get(ctx, tk.ID, "bob"); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("another owner on b: %v", err)
	}
	got, err := b.Get(ctx, tk.ID, "alice")
	if err != nil || got.Status != tasks.Working {
		t.Fatalf("get on b: %+v %v", got, err)
	}
	// A wait on b ends when a finishes the task; b's observer sees it.
	other := taskstest.Create(t, a, "alice", nil)
	<-seen
	waited := make(chan *tasks.Task, 1)
	go func() {
		w, err := b.Wait(ctx, other.ID, "alice")
		if err != nil {
			t.Error(err)
		}
		waited <- w
	}()
	time.Sleep(50 * time.Millisecond)
	if _, err := a.Finish(ctx, other.ID, tasks.Completed, "", []byte(`{"content":[]}`), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-waited:
		if w.Status != tasks.Completed || string(w.Result) != `{"content":[]}` {
			t.Fatalf("waited on b: %+v", w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("b's waiter did not wake")
	}
	if got := <-seen; got.ID != other.ID || got.Status != tasks.Completed {
		t.Fatalf("b observed %+v", got)
	}
	// Cancel through b: the guest on a stops, a's caps free the place.
	if all, _ := a.Running(""); all != 1 {
		t.Fatalf("a runs %d tasks", all)
	}
	c, err := b.Cancel(ctx, tk.ID, "alice")
	if err != nil || c.Status != tasks.Canceled {
		t.Fatalf("cancel on b: %+v %v", c, err)
	}
	select {
	case cause := <-stopped:
		if !errors.Is(cause, tasks.ErrCanceledByClient) {
			t.Fatalf("guest on a stopped with %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancellation did not reach a")
	}
	a.Stopped(tk.ID)
	if all, _ := a.Running(""); all != 0 {
		t.Fatalf("a still counts %d tasks", all)
	}
	if _, err := a.Finish(ctx, tk.ID, tasks.Completed, "", []byte(`{}`), nil); !errors.Is(err, tasks.ErrTerminal) {
		t.Fatalf("the guest's late result: %v", err)
	}
}

// A modern task waiting for input, created on a, is resumed by b: b runs
// it (and counts it), a forgets it.
func TestRedisResumeElsewhere(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	a := newReplica(t, srv, tasks.Options{})
	rb := openRedis(t, srv.URL())
	b := taskstest.NewManager(t, rb, tasks.Options{})
	tk := taskstest.Create(t, a, "", nil)
	if _, err := a.Update(ctx, tk.ID, func(t *tasks.Task) error {
		t.Inputs = []tasks.InputRequest{{Key: "k", Method: "elicitation/create", Params: []byte(`{}`)}}
		return a.Move(t, tasks.InputRequired, "")
	}); err != nil {
		t.Fatal(err)
	}
	if all, _ := a.Running(""); all != 1 {
		t.Fatalf("a counts %d", all)
	}
	if _, err := b.Update(ctx, tk.ID, func(t *tasks.Task) error { return b.Move(t, tasks.Working, "") }); err != nil {
		t.Fatal(err)
	}
	if !b.Attach(tk.ID, func(error) { go b.Stopped(tk.ID) }) {
		t.Fatal("b cannot attach a guest to the task it resumed")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		all, _ := a.Running("")
		if all == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a still counts the task b resumed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if all, _ := b.Running(""); all != 1 {
		t.Fatalf("b counts %d", all)
	}
	if run, _ := redis.String(rb.do(ctx, "HGET", rb.runningKey(), tk.ID)); run != rb.Replica() {
		t.Fatalf("the task runs on %q, want b", run)
	}
}

// Recovery by lease: a replica that stops renewing (killed) has its
// running tasks failed by another within the lease; a replica
// starting does not touch the tasks of live replicas.
func TestRedisLease(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	const lease = 400 * time.Millisecond
	deadStore := openRedis(t, srv.URL())
	dead, err := tasks.NewManager(ctx, deadStore, tasks.Options{Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	live := newReplica(t, srv, tasks.Options{Lease: lease})
	doomed := taskstest.Create(t, dead, "", func(error) {})
	kept := taskstest.Create(t, live, "", func(error) {})
	waiting := taskstest.Create(t, dead, "", nil)
	if _, err := dead.Update(ctx, waiting.ID, func(t *tasks.Task) error { return dead.Move(t, tasks.InputRequired, "") }); err != nil {
		t.Fatal(err)
	}
	// The process dies: its connection goes, nothing is closed properly.
	_ = deadStore.Close()
	killed := time.Now()
	// A replica starting meanwhile fails nothing that is alive.
	late := newReplica(t, srv, tasks.Options{Lease: lease})
	for {
		got, err := late.Lookup(ctx, doomed.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == tasks.Failed {
			if got.StatusMessage != tasks.MsgInterrupted || got.Error == nil || got.Error.Message != tasks.MsgInterrupted {
				t.Fatalf("failed task: %+v", got)
			}
			break
		}
		if time.Since(killed) > lease+250*time.Millisecond {
			t.Fatalf("the dead replica's task is still %s after %s", got.Status, time.Since(killed))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("failed %s after the replica died (lease %s)", time.Since(killed).Round(time.Millisecond), lease)
	time.Sleep(lease)
	if got, _ := live.Lookup(ctx, kept.ID); got.Status != tasks.Working {
		t.Fatalf("a live replica's task is %s", got.Status)
	}
	if got, _ := live.Lookup(ctx, waiting.ID); got.Status != tasks.InputRequired {
		t.Fatalf("a modern task waiting for input is %s; it stays resumable", got.Status)
	}
	// Closing a replica fails what it runs, at once.
	_ = live.Close(ctx, time.Second)
	if got, _ := late.Lookup(ctx, kept.ID); got.Status != tasks.Failed || got.StatusMessage != tasks.MsgShutdown {
		t.Fatalf("after its replica shut down: %+v", got)
	}
}

// Redis unavailable: task operations fail with ErrUnavailable, and work
// again when it returns.
func TestRedisUnavailable(t *testing.T) {
	srv := redistest.Start(t, true)
	ctx := context.Background()
	m := newReplica(t, srv, tasks.Options{Lease: time.Second})
	tk := taskstest.Create(t, m, "", nil)
	if _, err := m.Finish(ctx, tk.ID, tasks.Completed, "", []byte(`{"content":[]}`), nil); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if _, err := m.Get(ctx, tk.ID, ""); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("get during the outage: %v", err)
	}
	slot, _ := m.Reserve("")
	if err := m.Create(ctx, &tasks.Task{ID: tasks.NewID(), Era: contract.Modern, Tool: "x"}, slot, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("create during the outage: %v", err)
	}
	if all, _ := m.Running(""); all != 0 {
		t.Fatalf("a refused task holds a place: %d", all)
	}
	srv.Restart()
	got, err := m.Get(ctx, tk.ID, "")
	if err != nil || got.Status != tasks.Completed || string(got.Result) != `{"content":[]}` {
		t.Fatalf("after the restart (appendonly): %+v %v", got, err)
	}
	taskstest.Create(t, m, "", nil)
}

// The Redis limiter keeps the contract every Limiter keeps; places of a
// holder that stopped renewing come back after their hold.
func TestLimiter(t *testing.T) {
	srv := redistest.Start(t, false)
	r := openRedis(t, srv.URL())
	ctx := context.Background()
	limitertest.Run(t, r.Limiter())
	l := r.Limiter()
	kept, _, _ := l.Acquire(ctx, "h", 2, 300*time.Millisecond)
	if _, ok, _ := l.Acquire(ctx, "h", 2, 300*time.Millisecond); !ok {
		t.Fatal("second place")
	}
	time.Sleep(150 * time.Millisecond)
	if ok, err := kept.Renew(ctx, 300*time.Millisecond); !ok || err != nil {
		t.Fatalf("renew: %v %v", ok, err)
	}
	time.Sleep(200 * time.Millisecond)
	// The unrenewed place is back; the renewed one is still held.
	if _, ok, _ := l.Acquire(ctx, "h", 2, time.Minute); !ok {
		t.Fatal("an expired place did not come back")
	}
	if _, ok, _ := l.Acquire(ctx, "h", 2, time.Minute); ok {
		t.Fatal("a renewed place was lost")
	}
}

// --max-tasks-per-client across replicas.
func TestRedisPerOwnerCapAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	ra, rb := openRedis(t, srv.URL()), openRedis(t, srv.URL())
	a := taskstest.NewManager(t, ra, tasks.Options{MaxPerOwner: 2, Limiter: ra.Limiter()})
	b := taskstest.NewManager(t, rb, tasks.Options{MaxPerOwner: 2, Limiter: rb.Limiter()})
	taskstest.Create(t, a, "alice", nil)
	tb := taskstest.Create(t, b, "alice", nil)
	var le *tasks.LimitError
	if _, err := a.Reserve("alice"); !errors.As(err, &le) || !le.PerOwner {
		t.Fatalf("third task of alice on a: %v", err)
	}
	if s, err := a.Reserve("bob"); err != nil {
		t.Fatalf("bob: %v", err)
	} else {
		s.Release()
	}
	if _, err := b.Finish(ctx, tb.ID, tasks.Completed, "", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := a.Reserve("alice")
		if err == nil {
			s.Release()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a place freed on b is not free on a: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.Kill()
	if _, err := a.Reserve("carol"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("reserve with Redis down: %v", err)
	}
	if all, _ := a.Running(""); all != 1 {
		t.Fatalf("a refused reservation holds a place: %d", all)
	}
}

func TestRedisURLSecret(t *testing.T) {
	_, err := Open(context.Background(), "redis://user:s3cret@127.0.0.1:bad", Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a bad URL: %v", err)
	}
}

// --max-tasks across replicas: the server's cap counts every replica's
// tasks; a place freed on one is free on the other.
func TestRedisActiveCapAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	ra, rb := openRedis(t, srv.URL()), openRedis(t, srv.URL())
	a := taskstest.NewManager(t, ra, tasks.Options{MaxActive: 2, MaxPerOwner: 5, Limiter: ra.Limiter()})
	b := taskstest.NewManager(t, rb, tasks.Options{MaxActive: 2, MaxPerOwner: 5, Limiter: rb.Limiter()})
	taskstest.Create(t, a, "alice", nil)
	tb := taskstest.Create(t, b, "bob", nil)
	var le *tasks.LimitError
	for _, m := range []*tasks.Manager{a, b} {
		if _, err := m.Reserve("carol"); !errors.As(err, &le) || le.PerOwner || le.Limit != 2 {
			t.Fatalf("a third task in the cluster: %v", err)
		}
	}
	// A refusal by the server's cap keeps no place under the client's.
	if all, _ := a.Running(""); all != 1 {
		t.Fatalf("a refused reservation holds a place here: %d", all)
	}
	if _, err := b.Finish(ctx, tb.ID, tasks.Completed, "", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	reserve := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			s, err := a.Reserve("carol")
			if err == nil {
				s.Release() // given back in the background
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	reserve("a place freed on b is not free on a")
	// Each released reservation gives back its places under both caps:
	// more reservations than either cap all succeed in turn.
	for range 6 {
		reserve("a released place is still held")
	}
}

// A cancellation whose message this replica missed (its subscription was
// cut) still stops the guest: the replica re-reads the tasks it runs once
// per lease.
func TestRedisReconcileMissedCancel(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	ra, rb := openRedis(t, srv.URL()), openRedis(t, srv.URL())
	a := taskstest.NewManager(t, ra, tasks.Options{Lease: 400 * time.Millisecond})
	stopped := make(chan error, 1)
	tk := taskstest.Create(t, a, "alice", func(cause error) { stopped <- cause })
	// The task is cancelled in Redis without a message, as if the
	// message had been published while a's subscription was down.
	cur, err := rb.Get(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	cur.Status = tasks.Canceled
	rec, _ := json.Marshal(cur)
	if _, err := rb.do(ctx, "SET", rb.taskKey(tk.ID), rec, "KEEPTTL"); err != nil {
		t.Fatal(err)
	}
	select {
	case cause := <-stopped:
		if !errors.Is(cause, tasks.ErrCanceledByClient) {
			t.Fatalf("the guest stopped with %v", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancellation made without a message did not stop the guest")
	}
}

// BenchmarkTaskStore is the per-task cost the shared store adds through the
// Manager (loopback, one server; see package tasks for the command).
func BenchmarkTaskStore(b *testing.B) {
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b, false)
		s, err := Open(context.Background(), srv.URL(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		taskstest.BenchStore(b, s)
	})
}

// The Redis store keeps the Store contract.
func TestStoreContract(t *testing.T) {
	taskstest.StoreContract(t, func(t *testing.T) tasks.Store { return openRedis(t, redistest.Start(t, false).URL()) })
}

// A task whose guest finishes during a Redis outage keeps its outcome:
// the end is written once Redis is back (before, it was logged once and
// dropped, and the task stayed working until its TTL), and the task keeps
// its place until then.
func TestRedisOutcomeKeptThroughOutage(t *testing.T) {
	srv := redistest.Start(t, true)
	ctx := context.Background()
	a := newReplica(t, srv, tasks.Options{})
	b := newReplica(t, srv, tasks.Options{})
	_, stop := context.WithCancelCause(ctx)
	tk := taskstest.Create(t, a, "", stop)
	srv.Kill()
	_, err := a.FinishOrKeep(ctx, tk.ID, tasks.Completed, "", []byte(`{"content":[{"type":"text","text":"done"}]}`), nil)
	if !errors.Is(err, tasks.ErrPending) {
		t.Fatalf("finishing during the outage: %v", err)
	}
	a.Stopped(tk.ID) // the guest ended
	if all, _ := a.Running(""); all != 1 {
		t.Fatalf("the task gave up its place before its outcome was written: %d", all)
	}
	srv.Restart()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := b.Get(ctx, tk.ID, "")
		if err == nil && got.Status == tasks.Completed {
			if !strings.Contains(string(got.Result), "done") {
				t.Fatalf("result %s", got.Result)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outcome never arrived: %+v %v", got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for all, _ := a.Running(""); all != 0; all, _ = a.Running("") {
		if time.Now().After(deadline) {
			t.Fatalf("the written task still holds its place: %d", all)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
