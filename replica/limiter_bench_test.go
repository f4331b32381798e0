package replica

import (
	"context"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/redistest"
)

// BenchmarkSharedCaps is what the per-principal caps of --auth cost a
// request when replicas share a --store: a place taken (Acquire), the rate
// window counted (Allow) and the place given back (Release), three round
// trips to a loopback Redis.
//
//	go test ./replica -run '^$' -bench SharedCaps -benchtime 5000x -count 3
func BenchmarkSharedCaps(b *testing.B) {
	srv := redistest.Start(b, false)
	r, err := Open(context.Background(), srv.URL(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	l := r.Limiter()
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h, ok, err := l.Acquire(ctx, "principal-requests:alice", 1<<20, 30*time.Second)
			if err != nil || !ok {
				b.Fatal(ok, err)
			}
			if _, _, err := l.Allow(ctx, "principal-rate:alice", 1<<30, time.Minute); err != nil {
				b.Fatal(err)
			}
			if err := h.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
