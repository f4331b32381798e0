package tasks_test

import (
	"context"
	"fmt"

	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/tasks"
)

// An embedder keeps tasks in a store (memory here; boltstore.Open for a file),
// reserves a place under the caps before starting the work, creates the
// task, and finishes it with the result the work produced.
func ExampleManager() {
	ctx := context.Background()
	m, err := tasks.NewManager(ctx, tasks.NewMemory(), tasks.Options{MaxPerOwner: 4})
	if err != nil {
		panic(err)
	}
	defer m.Close(ctx, 0)

	slot, err := m.Reserve("alice")
	if err != nil {
		panic(err) // a *tasks.LimitError names the cap that was reached
	}
	id := tasks.NewID()
	work, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	_ = work // the work would run under this context; tasks/cancel ends it
	if err := m.Create(ctx, &tasks.Task{ID: id, Owner: "alice", Tool: "report", Era: contract.Modern}, slot, cancel); err != nil {
		panic(err)
	}

	t, _ := m.Get(ctx, id, "alice")
	fmt.Println("created:", t.Status)
	if _, err := m.Get(ctx, id, "mallory"); err != nil {
		fmt.Println("another principal:", err)
	}

	m.Finish(ctx, id, tasks.Completed, "", []byte(`{"content":[]}`), nil)
	m.Stopped(id)
	t, _ = m.Get(ctx, id, "alice")
	fmt.Println("finished:", t.Status, string(t.Result))
	// Output:
	// created: working
	// another principal: tasks: task not found
	// finished: completed {"content":[]}
}
