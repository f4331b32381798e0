//go:build !unix

package skills

import "io/fs"

// linkCount is a file's number of hard links, 1 when the platform does
// not say.
func linkCount(fs.FileInfo) uint64 { return 1 }

// inode is a file's inode number, 0 when the platform has none.
func inode(fs.FileInfo) uint64 { return 0 }
