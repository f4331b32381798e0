package host

import (
	"testing"
	"time"
)

// TestIdleReturnFiresOncePerIdlePeriod: the timer arms when the last call
// ends, a call starting meanwhile keeps the memory, and an idle period
// with no call since the last return returns nothing.
func TestIdleReturnFiresOncePerIdlePeriod(t *testing.T) {
	var r idleReturn
	defer r.stop()
	r.begin()
	r.begin()
	r.end()
	r.mu.Lock()
	if r.timer != nil {
		t.Error("the timer armed while a call still runs")
	}
	r.mu.Unlock()
	r.end()
	deadline := time.Now().Add(idleAfter + 10*time.Second)
	for {
		r.mu.Lock()
		ran := r.ran
		r.mu.Unlock()
		if !ran {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("memory was not returned after the calls ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A call running when the timer fires keeps it from returning.
	r.begin()
	r.fire()
	r.mu.Lock()
	if !r.ran {
		t.Error("returned memory while a call runs")
	}
	r.mu.Unlock()
	r.end()
}
