package boltstore

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/tasks"
	"github.com/wasmcp/wasmcp/tasks/taskstest"
)

// The bbolt store keeps the Store contract.
func TestStoreContract(t *testing.T) {
	taskstest.StoreContract(t, func(t *testing.T) tasks.Store {
		b, err := Open(filepath.Join(t.TempDir(), "t.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}

// A restart: working tasks and legacy input_required tasks fail with a
// status message, modern input_required tasks stay resumable, results
// survive.
func TestBoltRecovery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	ctx := context.Background()
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	m, err := tasks.NewManager(ctx, b, tasks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := taskstest.Create(t, m, "", nil)
	if _, err := m.Finish(ctx, done.ID, tasks.Completed, "", []byte(`{"content":[{"type":"text","text":"kept"}]}`), nil); err != nil {
		t.Fatal(err)
	}
	running := taskstest.Create(t, m, "", nil)
	waiting := taskstest.Create(t, m, "", nil)
	_, _ = m.Update(ctx, waiting.ID, func(t *tasks.Task) error {
		t.Inputs = []tasks.InputRequest{{Key: "k", Method: "elicitation/create", Params: []byte(`{}`)}}
		return m.Move(t, tasks.InputRequired, "")
	})
	// The process dies: nothing is closed properly but the file.
	_ = b.Close()

	b2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m2 := taskstest.NewManager(t, b2, tasks.Options{})
	got, err := m2.Get(ctx, done.ID, "")
	if err != nil || got.Status != tasks.Completed || string(got.Result) != `{"content":[{"type":"text","text":"kept"}]}` {
		t.Fatalf("completed task after restart: %+v %v", got, err)
	}
	got, err = m2.Get(ctx, running.ID, "")
	if err != nil || got.Status != tasks.Failed || got.StatusMessage != tasks.MsgInterrupted || got.Error == nil {
		t.Fatalf("running task after restart: %+v %v", got, err)
	}
	got, err = m2.Get(ctx, waiting.ID, "")
	if err != nil || got.Status != tasks.InputRequired || len(got.Inputs) != 1 {
		t.Fatalf("waiting task after restart: %+v %v", got, err)
	}
	if all, _ := m2.Running(""); all != 1 {
		t.Fatalf("recovered active tasks: %d", all)
	}
}

// TestResultByteCaps: a result past the per-result cap, the per-principal
// cap or the server's cap is not stored; the task fails saying which cap.
// Expiry gives the bytes back; a restart counts what the store holds.
func TestResultByteCaps(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	path := filepath.Join(t.TempDir(), "t.db")
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := tasks.Options{MaxResultBytes: 1000, MaxStoredPerOwner: 2500, MaxStoredBytes: 4000, Now: clock}
	m, err := tasks.NewManager(ctx, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	res := func(n int) []byte { return []byte(`{"content":[],"x":"` + strings.Repeat("a", n-21) + `"}`) }
	finish := func(owner string, n int) *tasks.Task {
		t.Helper()
		tk := taskstest.Create(t, m, owner, nil)
		got, err := m.Finish(ctx, tk.ID, tasks.Completed, "", res(n), nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := finish("alice", 1001); got.Status != tasks.Failed || got.Result != nil || !strings.Contains(got.Error.Message, "at most 1000") {
		t.Fatalf("oversized result: %+v", got)
	}
	for i := 0; i < 2; i++ {
		if got := finish("alice", 1000); got.Status != tasks.Completed || len(got.Result) != 1000 {
			t.Fatalf("result %d: %+v", i, got)
		}
	}
	if got := finish("alice", 1000); got.Status != tasks.Failed || !strings.Contains(got.Error.Message, "limit per client") {
		t.Fatalf("alice past her cap: %+v", got)
	}
	if got := finish("bob", 1000); got.Status != tasks.Completed {
		t.Fatalf("bob: %+v", got)
	}
	if got := finish("carol", 1000); got.Status != tasks.Failed || !strings.Contains(got.Error.Message, "server's stored task results") {
		t.Fatalf("carol past the server's cap: %+v", got)
	}
	all, alice := m.Stored("alice")
	if alice < 2000 || alice > 2500 || all > 4000 {
		t.Fatalf("stored %d, alice %d", all, alice)
	}
	if err := m.Close(ctx, time.Second); err != nil {
		t.Fatal(err)
	}

	// A restart counts what the store keeps; expiry frees it.
	b, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := tasks.NewManager(ctx, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close(ctx, time.Second)
	if all2, alice2 := m2.Stored("alice"); all2 != all || alice2 != alice {
		t.Fatalf("after restart: stored %d, alice %d; want %d, %d", all2, alice2, all, alice)
	}
	now = now.Add(2 * tasks.DefaultTTL)
	m2.Sweep(ctx)
	if all2, _ := m2.Stored("alice"); all2 != 0 {
		t.Fatalf("after expiry: stored %d", all2)
	}
}

// BenchmarkTaskStore is what the bbolt store costs one task through the
// Manager (see package tasks for the command).
func BenchmarkTaskStore(b *testing.B) {
	b.Run("bolt", func(b *testing.B) {
		s, err := Open(filepath.Join(b.TempDir(), "t.db"))
		if err != nil {
			b.Fatal(err)
		}
		taskstest.BenchStore(b, s)
	})
}
