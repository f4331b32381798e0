//go:build unix

package host

import (
	"io/fs"
	"syscall"
)

// inodeOf is the file's inode number, or 0 when the platform has none.
func inodeOf(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}

// linksOf is the file's number of names, or 1 when the platform does not
// say.
func linksOf(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}
