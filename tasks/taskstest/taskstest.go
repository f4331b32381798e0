// Package taskstest holds what the tests of every tasks.Store share: the
// Store contract (StoreContract), a Manager for a test (NewManager,
// Create) and the benchmark of a store through the Manager (BenchStore).
// The memory store's tests (package tasks), the bbolt store's
// (tasks/boltstore) and the Redis store's (replica) run the same checks.
package taskstest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/tasks"
)

// NewTask is a working modern task of owner created at at.
func NewTask(id, owner string, at time.Time) *tasks.Task {
	return &tasks.Task{ID: id, Owner: owner, Era: contract.Modern, Tool: "tool", Status: tasks.Working, CreatedAt: at, UpdatedAt: at,
		TTL: time.Hour, Params: []byte(`{"name":"tool"}`)}
}

// NewManager is a Manager over s, closed at the end of the test.
func NewManager(t *testing.T, s tasks.Store, opts tasks.Options) *tasks.Manager {
	t.Helper()
	m, err := tasks.NewManager(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background(), time.Second) })
	return m
}

// Create reserves a place and creates a working task of owner whose guest
// stops with cancel.
func Create(t *testing.T, m *tasks.Manager, owner string, cancel context.CancelCauseFunc) *tasks.Task {
	t.Helper()
	slot, err := m.Reserve(owner)
	if err != nil {
		t.Fatal(err)
	}
	tk := &tasks.Task{ID: tasks.NewID(), Owner: owner, Era: contract.Modern, Tool: "tool"}
	if err := m.Create(context.Background(), tk, slot, cancel); err != nil {
		t.Fatal(err)
	}
	return tk
}

// StoreContract checks the Store contract on fresh stores from open:
// create, get (a copy), update (atomic, fn's error aborts, identity
// kept), delete, list in creation order by pages, scan.
func StoreContract(t *testing.T, open func(t *testing.T) tasks.Store) {
	t.Run("contract", func(t *testing.T) { storeContract(t, open(t)) })
	t.Run("update-atomic", func(t *testing.T) { updateAtomic(t, open(t)) })
}

func storeContract(t *testing.T, s tasks.Store) {
	ctx := context.Background()
	base := time.Unix(1_800_000_000, 0).UTC()
	for i := 0; i < 7; i++ {
		if err := s.Create(ctx, NewTask(fmt.Sprintf("a%d", i), "alice", base.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, NewTask("b0", "bob", base)); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, NewTask("a0", "alice", base)); !errors.Is(err, tasks.ErrExists) {
		t.Fatalf("duplicate create: %v", err)
	}
	got, err := s.Get(ctx, "a3")
	if err != nil || got.Owner != "alice" || string(got.Params) != `{"name":"tool"}` || !got.CreatedAt.Equal(base.Add(3*time.Second)) {
		t.Fatalf("get: %+v %v", got, err)
	}
	got.Owner = "mallory" // a copy: the store must not change
	if again, _ := s.Get(ctx, "a3"); again.Owner != "alice" {
		t.Fatal("Get returned the stored record, not a copy")
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	// Update: fn's error aborts; identity cannot change.
	boom := errors.New("boom")
	if _, err := s.Update(ctx, "a1", func(t *tasks.Task) error { t.Status = tasks.Failed; return boom }); !errors.Is(err, boom) {
		t.Fatalf("aborted update: %v", err)
	}
	up, err := s.Update(ctx, "a1", func(t *tasks.Task) error {
		t.Status, t.Owner = tasks.Completed, "bob"
		t.Result = []byte(`{}`)
		return nil
	})
	if err != nil || up.Status != tasks.Completed || up.Owner != "alice" {
		t.Fatalf("update: %+v %v", up, err)
	}
	if _, err := s.Update(ctx, "nope", func(*tasks.Task) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	// List pages in creation order.
	var ids []string
	after := ""
	for {
		page, err := s.List(ctx, "alice", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range page {
			ids = append(ids, x.ID)
		}
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].OrderKey()
	}
	if fmt.Sprint(ids) != "[a0 a1 a2 a3 a4 a5 a6]" {
		t.Fatalf("list: %v", ids)
	}
	if err := s.Delete(ctx, "a2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a2"); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	page, _ := s.List(ctx, "alice", "", 10)
	if len(page) != 6 {
		t.Fatalf("after delete: %d tasks", len(page))
	}
	n := 0
	if err := s.Scan(ctx, func(*tasks.Task) bool { n++; return true }); err != nil || n != 7 {
		t.Fatalf("scan: %d %v", n, err)
	}
}

// updateAtomic: concurrent updates of one task are serialised.
func updateAtomic(t *testing.T, s tasks.Store) {
	ctx := context.Background()
	if err := s.Create(ctx, NewTask("x", "", time.Now())); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Update(ctx, "x", func(t *tasks.Task) error {
				t.TTL += time.Millisecond
				return nil
			})
		}()
	}
	wg.Wait()
	got, _ := s.Get(ctx, "x")
	if got.TTL != time.Hour+20*time.Millisecond {
		t.Fatalf("lost updates: ttl %s", got.TTL)
	}
}

// BenchStore is what s costs one task through the Manager: create, a
// tasks/get, the result stored, a tasks/get of the result.
func BenchStore(b *testing.B, s tasks.Store) {
	result := []byte(`{"content":[{"type":"text","text":"done"}]}`)
	m, err := tasks.NewManager(context.Background(), s, tasks.Options{MaxActive: 1 << 30, MaxPerOwner: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background(), 0)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		slot, err := m.Reserve("alice")
		if err != nil {
			b.Fatal(err)
		}
		tk := &tasks.Task{ID: tasks.NewID(), Owner: "alice", Era: contract.Modern, Tool: "tool", Params: []byte(`{"name":"tool","arguments":{}}`)}
		if err := m.Create(ctx, tk, slot, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Get(ctx, tk.ID, "alice"); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Finish(ctx, tk.ID, tasks.Completed, "", result, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Get(ctx, tk.ID, "alice"); err != nil {
			b.Fatal(err)
		}
	}
}
