package tasks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

func TestTransitions(t *testing.T) {
	all := []Status{Working, InputRequired, Completed, Failed, Canceled}
	allowed := map[[2]Status]bool{
		{Working, InputRequired}: true, {Working, Completed}: true, {Working, Failed}: true, {Working, Canceled}: true,
		{InputRequired, Working}: true, {InputRequired, Completed}: true, {InputRequired, Failed}: true, {InputRequired, Canceled}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := from.CanMove(to); got != allowed[[2]Status{from, to}] {
				t.Errorf("%s → %s: CanMove = %v", from, to, got)
			}
		}
	}
	if Status("done").Valid() || Working.CanMove("done") {
		t.Error("an unknown status is accepted")
	}
	tk := &Task{ID: "x", Status: Completed}
	if err := tk.move(Failed, "", time.Now()); !errors.Is(err, ErrTerminal) {
		t.Errorf("moving a completed task: %v, want ErrTerminal", err)
	}
}

func newManager(t *testing.T, s Store, opts Options) *Manager {
	t.Helper()
	m, err := NewManager(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background(), time.Second) })
	return m
}

func create(t *testing.T, m *Manager, owner string, cancel context.CancelCauseFunc) *Task {
	t.Helper()
	slot, err := m.Reserve(owner)
	if err != nil {
		t.Fatal(err)
	}
	tk := &Task{ID: NewID(), Owner: owner, Era: contract.Modern, Tool: "tool"}
	if err := m.Create(context.Background(), tk, slot, cancel); err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestManagerCaps(t *testing.T) {
	m := newManager(t, NewMemory(), Options{MaxActive: 3, MaxPerOwner: 2})
	a1 := create(t, m, "alice", nil)
	create(t, m, "alice", nil)
	var le *LimitError
	if _, err := m.Reserve("alice"); !errors.As(err, &le) || !le.PerOwner || le.Limit != 2 {
		t.Fatalf("third task of alice: %v", err)
	}
	s, err := m.Reserve("bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reserve("carol"); !errors.As(err, &le) || le.PerOwner || le.Limit != 3 {
		t.Fatalf("fourth task: %v", err)
	}
	s.Release()
	s.Release() // idempotent
	if all, _ := m.Running(""); all != 2 {
		t.Fatalf("running after release: %d", all)
	}
	// An ended task frees its place.
	if _, err := m.Finish(context.Background(), a1.ID, Completed, "", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reserve("alice"); err != nil {
		t.Fatalf("after a task ended: %v", err)
	}
}

func TestManagerOwnershipAndCancel(t *testing.T) {
	m := newManager(t, NewMemory(), Options{})
	ctx := context.Background()
	var gotCause error
	stopped := make(chan struct{})
	tk := create(t, m, "alice", func(cause error) { gotCause = cause; close(stopped) })
	if _, err := m.Get(ctx, tk.ID, "bob"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another owner's task: %v", err)
	}
	if _, err := m.Cancel(ctx, tk.ID, "bob"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cancelling another owner's task: %v", err)
	}
	got, err := m.Cancel(ctx, tk.ID, "alice")
	if err != nil || got.Status != Canceled || got.StatusMessage != MsgCanceled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	<-stopped
	if !errors.Is(gotCause, ErrCanceledByClient) {
		t.Fatalf("guest stopped with %v", gotCause)
	}
	m.Stopped(tk.ID)
	// Terminal states never change.
	if _, err := m.Finish(ctx, tk.ID, Completed, "", []byte(`{}`), nil); !errors.Is(err, ErrTerminal) {
		t.Fatalf("completing a cancelled task: %v", err)
	}
	if _, err := m.Cancel(ctx, tk.ID, "alice"); !errors.Is(err, ErrTerminal) {
		t.Fatalf("second cancel: %v", err)
	}
}

func TestManagerWait(t *testing.T) {
	m := newManager(t, NewMemory(), Options{})
	ctx := context.Background()
	tk := create(t, m, "", nil)
	done := make(chan *Task)
	go func() {
		got, err := m.Wait(ctx, tk.ID, "")
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	_, _ = m.Update(ctx, tk.ID, func(t *Task) error { return m.Move(t, InputRequired, "") })
	select {
	case <-done:
		t.Fatal("Wait returned before the task ended")
	case <-time.After(20 * time.Millisecond):
	}
	_, _ = m.Finish(ctx, tk.ID, Failed, "no", nil, &abi.Error{Code: -32603, Message: "no"})
	if got := <-done; got.Status != Failed || got.Error.Message != "no" {
		t.Fatalf("waited: %+v", got)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	other := create(t, m, "", nil)
	if _, err := m.Wait(wctx, other.ID, ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past the deadline: %v", err)
	}
}

func TestManagerTTL(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m := newManager(t, NewMemory(), Options{TTL: time.Minute, MaxTTL: time.Hour, Now: clock, SweepEvery: time.Hour})
	if m.TTL(0) != time.Minute || m.TTL(2*time.Hour) != time.Hour || m.TTL(time.Second) != time.Second {
		t.Fatal("TTL defaults and cap")
	}
	ctx := context.Background()
	stopped := make(chan error, 1)
	var tk *Task
	tk = create(t, m, "", func(cause error) { stopped <- cause; go m.Stopped(tk.ID) })
	mu.Lock()
	now = now.Add(59 * time.Second)
	mu.Unlock()
	if _, err := m.Get(ctx, tk.ID, ""); err != nil {
		t.Fatalf("before its TTL: %v", err)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if _, err := m.Get(ctx, tk.ID, ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("at its TTL: %v", err)
	}
	m.Sweep(ctx)
	if cause := <-stopped; !errors.Is(cause, ErrExpired) {
		t.Fatalf("guest stopped with %v", cause)
	}
	if _, err := m.Lookup(ctx, tk.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("swept task still stored: %v", err)
	}
	if all, _ := m.Running(""); all != 0 {
		t.Fatalf("an expired task still counts: %d", all)
	}
}

func TestManagerList(t *testing.T) {
	m := newManager(t, NewMemory(), Options{})
	ctx := context.Background()
	var want []string
	for i := 0; i < 5; i++ {
		slot, _ := m.Reserve("")
		sess := "s1"
		if i%2 == 1 {
			sess = "s2"
		}
		tk := &Task{ID: fmt.Sprintf("t%d", i), Era: contract.Legacy, Session: sess, Tool: "x", CreatedAt: time.Now().Add(time.Duration(i) * time.Millisecond)}
		if err := m.Create(ctx, tk, slot, nil); err != nil {
			t.Fatal(err)
		}
		if sess == "s1" {
			want = append(want, tk.ID)
		}
	}
	var got []string
	cursor := ""
	for pages := 0; pages < 10; pages++ {
		p, err := m.List(ctx, "", "s1", cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range p.Tasks {
			got = append(got, x.ID)
		}
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("session listing: %v, want %v", got, want)
	}
	p, _ := m.List(ctx, "", "", "", 10)
	if len(p.Tasks) != 5 || p.Next != "" {
		t.Fatalf("full listing: %d tasks, next %q", len(p.Tasks), p.Next)
	}
}

func TestCloseFailsRunningTasks(t *testing.T) {
	m, err := NewManager(context.Background(), NewMemory(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var causes []error
	var mu sync.Mutex
	var ids []string
	for i := 0; i < 3; i++ {
		var tk *Task
		tk = create(t, m, "", func(c error) {
			mu.Lock()
			causes = append(causes, c)
			mu.Unlock()
			go m.Stopped(tk.ID)
		})
		ids = append(ids, tk.ID)
	}
	failed := 0
	m.OnChange(func(t *Task) {
		if t.Status == Failed && t.StatusMessage == MsgShutdown && t.Error != nil {
			mu.Lock()
			failed++
			mu.Unlock()
		}
	})
	store := m.store
	if err := m.Close(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if failed != 3 {
		t.Fatalf("%d tasks marked failed at shutdown, want 3", failed)
	}
	if len(causes) != 3 || !errors.Is(causes[0], ErrShutdown) {
		t.Fatalf("guests stopped with %v", causes)
	}
	if _, err := store.Get(ctx, ids[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("store after close: %v", err)
	}
	if _, err := m.Reserve(""); !errors.Is(err, ErrClosed) {
		t.Fatalf("reserve after close: %v", err)
	}
}
