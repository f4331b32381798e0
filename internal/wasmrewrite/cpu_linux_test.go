package wasmrewrite

import "golang.org/x/sys/unix"

// processCPU returns the CPU time the whole process has used (the garbage
// collector's included), in nanoseconds (0 when it cannot be read):
// benchmarks report it beside wall time, which other processes on a busy
// machine inflate.
func processCPU() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
