//go:build unix

package registry

import (
	"io/fs"
	"syscall"
)

// inode is the file's inode number: a rename over a file changes it even
// when size and modification time match.
func inode(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}
