package tasks

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/contract"
)

// outageStore fails every Update while down is set.
type outageStore struct {
	Store
	down atomic.Bool
}

var errDown = errors.New("store unreachable")

func (s *outageStore) Update(ctx context.Context, id string, fn func(*Task) error) (*Task, error) {
	if s.down.Load() {
		return nil, errDown
	}
	return s.Store.Update(ctx, id, fn)
}

// TestFinishOrKeepBounds: an outcome the store cannot take is kept and
// written when it is back; one larger than what may be kept becomes a
// failure that says why, written the same way.
func TestFinishOrKeepBounds(t *testing.T) {
	ctx := context.Background()
	st := &outageStore{Store: NewMemory()}
	m, err := NewManager(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx, time.Second)
	create := func() *Task {
		slot, err := m.Reserve("")
		if err != nil {
			t.Fatal(err)
		}
		tk := &Task{ID: NewID(), Era: contract.Modern, Tool: "tool"}
		if err := m.Create(ctx, tk, slot, func(error) {}); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	small, big := create(), create()
	st.down.Store(true)
	if _, err := m.FinishOrKeep(ctx, small.ID, Completed, "", []byte(`{"content":[]}`), nil); !errors.Is(err, ErrPending) {
		t.Fatalf("small: %v", err)
	}
	if _, err := m.FinishOrKeep(ctx, big.ID, Completed, "", make([]byte, MaxPendingBytes+1), nil); !errors.Is(err, ErrPending) {
		t.Fatalf("big: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // a retry while still down
	st.down.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, _ := m.Lookup(ctx, small.ID)
		b, _ := m.Lookup(ctx, big.ID)
		if a != nil && b != nil && a.Status.Terminal() && b.Status.Terminal() {
			if a.Status != Completed || string(a.Result) != `{"content":[]}` {
				t.Fatalf("small: %+v", a)
			}
			if b.Status != Failed || !strings.Contains(b.StatusMessage, "could not be kept while the task store was unavailable") {
				t.Fatalf("big: %s %q", b.Status, b.StatusMessage)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not written: %+v %+v", a, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
