package host

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time the calling OS thread has used, in
// nanoseconds (0 when it cannot be read). Benchmarks lock their goroutine
// to its thread and report it beside wall time, which other processes on a
// busy machine inflate.
func threadCPU() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
