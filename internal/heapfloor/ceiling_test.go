package heapfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

func TestLimitFor(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		target     int64
		live, room uint64
		want       int64
	}{
		{768 * MiB, 100 * MiB, 64 * MiB, 768 * MiB},   // the target bounds the heap
		{768 * MiB, 200 * MiB, 64 * MiB, 768 * MiB},   //
		{128 * MiB, 200 * MiB, 64 * MiB, 264 * MiB},   // never below live plus the room
		{768 * MiB, 900 * MiB, 64 * MiB, 1125 * MiB},  // or plus a quarter of live, when more
		{0, 100 * MiB, 64 * MiB, math.MaxInt64},       // no target: no limit
		{-1, 100 * MiB, 64 * MiB, math.MaxInt64},      //
		{768 * MiB, 0, 0, 768 * MiB},                  //
		{768 * MiB, math.MaxUint64, 1, math.MaxInt64}, // bounded
	} {
		if got := limitFor(c.target, c.live, c.room); got != c.want {
			t.Errorf("limitFor(%d, %d, %d) = %d, want %d", c.target, c.live, c.room, got, c.want)
		}
	}
}

// TestCeilingFollowsItsTarget: the runtime's memory limit is the target
// from collection to collection, rises with a live heap past it, and is
// restored by Stop.
func TestCeilingFollowsItsTarget(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	before := debug.SetMemoryLimit(-1)
	var target atomic.Int64
	target.Store(512 << 20)
	c := StartCeiling(target.Load, 64<<20)
	defer c.Stop()
	until := func(what string, want func(l int64) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !want(c.Limit()) || c.Limit() != debug.SetMemoryLimit(-1) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the ceiling's limit is %d, the runtime's %d", what, c.Limit(), debug.SetMemoryLimit(-1))
			}
			runtime.GC()
			time.Sleep(10 * time.Millisecond) // the finalizer goroutine runs
		}
	}
	until("at start", func(l int64) bool { return l == 512<<20 })
	target.Store(300 << 20)
	until("a lower target", func(l int64) bool { return l == 300<<20 })
	live := make([][]byte, 320)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 320 MiB live, past the target
	}
	until("320 MiB live", func(l int64) bool { return l >= 384<<20 })
	runtime.KeepAlive(live)
	live = nil
	until("the live heap gone", func(l int64) bool { return l == 300<<20 })
	c.Stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("after Stop the limit is %d, want the starting %d", got, before)
	}
	// A second ceiling while one runs does nothing.
	c2 := StartCeiling(target.Load, 0)
	c3 := StartCeiling(func() int64 { return 1 << 20 }, 0)
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Fatalf("the limit is %d with a second ceiling started; want the first's", got)
	}
	c3.Stop()
	c2.Stop()
}
