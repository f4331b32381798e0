//go:build unix

package skills

import (
	"io/fs"
	"syscall"
)

// linkCount is a file's number of hard links, 1 when the platform does
// not say.
func linkCount(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

// inode is a file's inode number, 0 when the platform has none.
func inode(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}
