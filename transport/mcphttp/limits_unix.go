//go:build unix

package mcphttp

import "syscall"

// fdLimit is the process's soft limit on open file descriptors, 0 when
// unknown.
func fdLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return int(min(rl.Cur, 1<<20)) // RLIM_INFINITY counts as a million
}
