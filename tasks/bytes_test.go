package tasks

import (
	"context"
	"strings"
	"testing"
	"time"
)

// keptStore is a Store that outlives its Manager, as a file does a
// process: Close does not close it.
type keptStore struct{ Store }

func (keptStore) Close() error { return nil }

// TestResultByteCaps: a result past the per-result cap, the per-principal
// cap or the server's cap is not stored; the task fails saying which cap.
// Expiry gives the bytes back; a restart (a new Manager over the same
// store) counts what the store holds.
func TestResultByteCaps(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	b := keptStore{NewMemory()}
	opts := Options{MaxResultBytes: 1000, MaxStoredPerOwner: 2500, MaxStoredBytes: 4000, Now: clock}
	m, err := NewManager(ctx, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	res := func(n int) []byte { return []byte(`{"content":[],"x":"` + strings.Repeat("a", n-21) + `"}`) }
	finish := func(owner string, n int) *Task {
		t.Helper()
		tk := create(t, m, owner, nil)
		got, err := m.Finish(ctx, tk.ID, Completed, "", res(n), nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := finish("alice", 1001); got.Status != Failed || got.Result != nil || !strings.Contains(got.Error.Message, "at most 1000") {
		t.Fatalf("oversized result: %+v", got)
	}
	for i := 0; i < 2; i++ {
		if got := finish("alice", 1000); got.Status != Completed || len(got.Result) != 1000 {
			t.Fatalf("result %d: %+v", i, got)
		}
	}
	if got := finish("alice", 1000); got.Status != Failed || !strings.Contains(got.Error.Message, "limit per client") {
		t.Fatalf("alice past her cap: %+v", got)
	}
	if got := finish("bob", 1000); got.Status != Completed {
		t.Fatalf("bob: %+v", got)
	}
	if got := finish("carol", 1000); got.Status != Failed || !strings.Contains(got.Error.Message, "server's stored task results") {
		t.Fatalf("carol past the server's cap: %+v", got)
	}
	all, alice := m.storedBytes("alice")
	if alice < 2000 || alice > 2500 || all > 4000 {
		t.Fatalf("stored %d, alice %d", all, alice)
	}
	if err := m.Close(ctx, time.Second); err != nil {
		t.Fatal(err)
	}

	// A restart counts what the store keeps; expiry frees it.
	m2, err := NewManager(ctx, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close(ctx, time.Second)
	if all2, alice2 := m2.storedBytes("alice"); all2 != all || alice2 != alice {
		t.Fatalf("after restart: stored %d, alice %d; want %d, %d", all2, alice2, all, alice)
	}
	now = now.Add(2 * DefaultTTL)
	m2.Sweep(ctx)
	if all2, _ := m2.storedBytes("alice"); all2 != 0 {
		t.Fatalf("after expiry: stored %d", all2)
	}
}
