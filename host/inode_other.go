//go:build !unix

package host

import "io/fs"

// inodeOf is the file's inode number, or 0 when the platform has none.
func inodeOf(fs.FileInfo) uint64 { return 0 }

// linksOf is the file's number of names, or 1 when the platform does not
// say.
func linksOf(fs.FileInfo) uint64 { return 1 }
