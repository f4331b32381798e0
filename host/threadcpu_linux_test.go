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

// processCPU returns the CPU time the whole process has used (every
// thread: the work of other goroutines and of the garbage collector
// included), in nanoseconds (0 when it cannot be read).
func processCPU() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
