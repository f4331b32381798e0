package tasks

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wasmcp/wasmcp/internal/testkit/redistest"
)

// BenchmarkTaskStore is what a store costs one task through the Manager:
// create, a tasks/get, the result stored, a tasks/get of the result. The
// Redis figure is the per-task cost the shared store adds (loopback, one
// server).
//
//	go test ./tasks -run '^$' -bench TaskStore -benchtime 2000x
func BenchmarkTaskStore(b *testing.B) {
	result := []byte(`{"content":[{"type":"text","text":"done"}]}`)
	run := func(b *testing.B, s Store) {
		m, err := NewManager(context.Background(), s, Options{MaxActive: 1 << 30, MaxPerOwner: 1 << 30})
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
			tk := &Task{ID: NewID(), Owner: "alice", Era: Modern, Tool: "tool", Params: []byte(`{"name":"tool","arguments":{}}`)}
			if err := m.Create(ctx, tk, slot, nil); err != nil {
				b.Fatal(err)
			}
			if _, err := m.Get(ctx, tk.ID, "alice"); err != nil {
				b.Fatal(err)
			}
			if _, err := m.Finish(ctx, tk.ID, Completed, "", result, nil); err != nil {
				b.Fatal(err)
			}
			if _, err := m.Get(ctx, tk.ID, "alice"); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, NewMemory()) })
	b.Run("bolt", func(b *testing.B) {
		s, err := OpenBolt(filepath.Join(b.TempDir(), "t.db"))
		if err != nil {
			b.Fatal(err)
		}
		run(b, s)
	})
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b, false)
		s, err := OpenRedis(context.Background(), srv.URL(), RedisOptions{})
		if err != nil {
			b.Fatal(err)
		}
		run(b, s)
	})
}
