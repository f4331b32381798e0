//go:build !linux

package host

import "time"

// threadClock is not available here: load runs are judged by wall time.
type threadClock struct{}

func currentThreadClock() threadClock { return threadClock{} }

func (threadClock) cpu() (time.Duration, bool) { return 0, false }
