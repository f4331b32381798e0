//go:build !unix

package registry

import "io/fs"

// sysStat is zero where the platform has no inode numbers or change
// times: size, mode and modification time then tell versions apart, and
// the stat index is not used (see indexable).
func sysStat(fs.FileInfo) (dev, ino uint64, ctime int64) { return 0, 0, 0 }
