package heapfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		live, headroom uint64
		base, want     int
	}{
		{4 * MiB, 8 * MiB, 100, 200},   // a small heap gets the headroom
		{2 * MiB, 8 * MiB, 100, 400},   //
		{200 * MiB, 8 * MiB, 100, 100}, // a large one keeps its percentage
		{8 * MiB, 8 * MiB, 100, 100},   // equal: the base
		{4 * MiB, 8 * MiB, 300, 300},   // never below the base
		{1, 8 * MiB, 100, maxPercent},  // bounded
		{0, 8 * MiB, 100, maxPercent},  // nothing live yet
		{100 * MiB, 0, 100, 100},       // no floor
	} {
		if got := percentFor(c.live, c.headroom, c.base); got != c.want {
			t.Errorf("percentFor(%d, %d, %d) = %d, want %d", c.live, c.headroom, c.base, got, c.want)
		}
	}
}

// gcPercent reads the percentage in force.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestFloorFollowsCollections: the percentage follows the live heap from
// collection to collection — it leaves the headroom above a small heap,
// falls back to the base while a large heap is live, rises again once it is
// gone — and Stop restores the starting percentage.
func TestFloorFollowsCollections(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	f := Start(32 << 20)
	defer f.Stop()
	until := func(what string, ok func(p int) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok(f.Percent()) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the percentage stayed %d", what, f.Percent())
			}
			runtime.GC()
			time.Sleep(10 * time.Millisecond) // the finalizer goroutine runs
		}
	}
	until("small live heap", func(p int) bool { return p > 100 })
	live := make([][]byte, 128)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 128 MiB live: 32 MiB is a quarter
	}
	until("128 MiB live", func(p int) bool { return p == 100 })
	if got := gcPercent(); got != 100 {
		t.Fatalf("the runtime's percentage is %d, the floor says 100", got)
	}
	runtime.KeepAlive(live)
	live = nil
	until("large heap gone", func(p int) bool { return p > 100 })
	if got := gcPercent(); got != f.Percent() {
		t.Fatalf("the runtime's percentage is %d, the floor says %d", got, f.Percent())
	}
	f.Stop()
	if got := gcPercent(); got != 100 {
		t.Fatalf("after Stop the percentage is %d, want the starting 100", got)
	}
	// Stopped, a collection changes nothing.
	debug.SetGCPercent(150)
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := gcPercent(); got != 150 {
		t.Fatalf("a collection after Stop set the percentage to %d", got)
	}
}

// TestFloorKeepsALargeHeapsPercentage: with a live heap larger than the
// headroom, the percentage stays the base.
func TestFloorKeepsALargeHeapsPercentage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 64 MiB live
	}
	f := Start(8 << 20)
	defer f.Stop()
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if p := f.Percent(); p != 100 {
		t.Fatalf("percentage %d with 64 MiB live and 8 MiB headroom; want 100", p)
	}
	runtime.KeepAlive(live)
}

// TestFloorOff: with the collector off, or no headroom, nothing changes.
func TestFloorOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	f := Start(256 << 20)
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := gcPercent(); got != -1 {
		t.Fatalf("GOGC=off became %d", got)
	}
	f.Stop()
	debug.SetGCPercent(100)
	g := Start(0)
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := gcPercent(); got != 100 {
		t.Fatalf("no headroom changed the percentage to %d", got)
	}
	g.Stop()
}

// TestOneFloorAtATime: a second Start while one runs does nothing, and
// stopping it leaves the first in charge.
func TestOneFloorAtATime(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	f := Start(256 << 20)
	defer f.Stop()
	p := f.Percent()
	if p <= 100 {
		t.Fatalf("the first floor set %d", p)
	}
	g := Start(1)
	g.Stop()
	if got := gcPercent(); got != p {
		t.Fatalf("a second floor's Stop changed the percentage to %d (the first set %d)", got, p)
	}
	f.Stop()
	h := Start(256 << 20)
	defer h.Stop()
	if h.Percent() <= 100 {
		t.Fatal("a floor started after the first stopped does nothing")
	}
}
