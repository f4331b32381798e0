//go:build !unix

package registry

import "io/fs"

// inode is 0 where the platform has no inode numbers; size and
// modification time then tell versions apart.
func inode(fs.FileInfo) uint64 { return 0 }
