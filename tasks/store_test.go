package tasks_test

import (
	"testing"

	"github.com/wasmcp/wasmcp/tasks"
	"github.com/wasmcp/wasmcp/tasks/taskstest"
)

// The memory store keeps the Store contract (the bbolt store's tests in
// tasks/boltstore and the Redis store's in replica run the same checks).
func TestStoreContract(t *testing.T) {
	taskstest.StoreContract(t, func(*testing.T) tasks.Store { return tasks.NewMemory() })
}

// BenchmarkTaskStore is what a store costs one task through the Manager:
// create, a tasks/get, the result stored, a tasks/get of the result. The
// bbolt and Redis figures are in tasks/boltstore and replica:
//
//	go test ./tasks/... ./replica -run '^$' -bench TaskStore -benchtime 2000x
func BenchmarkTaskStore(b *testing.B) {
	b.Run("memory", func(b *testing.B) { taskstest.BenchStore(b, tasks.NewMemory()) })
}
