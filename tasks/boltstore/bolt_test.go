package boltstore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

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
