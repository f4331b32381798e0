//go:build unix

package registry

import (
	"io/fs"
	"syscall"
)

// sysStat is what the platform adds to a file's size and modification
// time to tell its versions apart: the device and inode numbers (a rename
// over a file changes them even when size and modification time match)
// and the inode's change time, which every write, rename and utimes call
// sets to the current time and which no user can set back.
func sysStat(st fs.FileInfo) (dev, ino uint64, ctime int64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev), uint64(s.Ino), ctimeOf(s)
	}
	return 0, 0, 0
}
