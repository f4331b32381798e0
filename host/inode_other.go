//go:build !unix

package host

import "io/fs"

// inodeOf is the file's inode number, or 0 when the platform has none.
func inodeOf(fs.FileInfo) uint64 { return 0 }
