//go:build unix

package tstransform

import (
	"os"
	"syscall"
	"time"
)

// limitCPU sets the process's CPU-time limit. The kernel sends SIGXCPU at
// the soft limit, which a Go program ignores, and SIGKILL at the hard one.
func limitCPU(seconds uint64) {
	_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: seconds, Max: seconds + 1})
}

// overCPU reports whether a child ended on its CPU-time limit: killed
// after using at least seconds of CPU.
func overCPU(st *os.ProcessState, seconds uint64) bool {
	if st == nil {
		return false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL) &&
		st.UserTime()+st.SystemTime() >= time.Duration(seconds)*time.Second
}
