//go:build linux || openbsd || dragonfly || solaris || illumos

package registry

import "syscall"

// ctimeOf is the inode change time in Unix nanoseconds.
func ctimeOf(s *syscall.Stat_t) int64 { return s.Ctim.Nano() }
