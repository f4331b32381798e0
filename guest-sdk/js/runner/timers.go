package main

import (
	"sort"
	"time"

	"github.com/dop251/goja"
)

// timers are setTimeout and setInterval: they fire only while a call waits
// for its handler's promise, earliest first, in real time (the host's
// deadline still ends the call).
type timers struct {
	next  int64
	queue []*timer
}

type timer struct {
	id       int64
	due      time.Time
	every    time.Duration
	fn       goja.Callable
	interval bool
}

func (t *timers) add(fn goja.Callable, ms float64, interval bool) int64 {
	if ms != ms || ms < 0 {
		ms = 0
	}
	d := time.Duration(ms * float64(time.Millisecond))
	t.next++
	t.queue = append(t.queue, &timer{id: t.next, due: time.Now().Add(d), every: d, fn: fn, interval: interval})
	return t.next
}

func (t *timers) remove(id int64) {
	for i, x := range t.queue {
		if x.id == id {
			t.queue = append(t.queue[:i], t.queue[i+1:]...)
			return
		}
	}
}

func (t *timers) clear() int {
	n := len(t.queue)
	t.queue = nil
	return n
}

// runNext waits for the earliest timer and runs its callback; false when
// no timer is set.
func (t *timers) runNext(vm *goja.Runtime) (bool, error) {
	if len(t.queue) == 0 {
		return false, nil
	}
	sort.SliceStable(t.queue, func(i, j int) bool { return t.queue[i].due.Before(t.queue[j].due) })
	x := t.queue[0]
	if d := time.Until(x.due); d > 0 {
		time.Sleep(d)
	}
	if x.interval {
		x.due = x.due.Add(max(x.every, time.Millisecond))
	} else {
		t.queue = t.queue[1:]
	}
	_, err := x.fn(goja.Undefined())
	return true, err
}
