package host

import (
	"fmt"
	"io/fs"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// DefaultMaxWriteBytes is the write budget of a read-write mount, per call
// and per snapshot start-up run, when its policy sets no max_write_bytes.
const DefaultMaxWriteBytes = 64 << 20

// writeLimit is the mount's write budget: its MaxWriteBytes, or the
// default.
func (m Mount) writeLimit() int64 {
	if m.MaxWriteBytes > 0 {
		return m.MaxWriteBytes
	}
	return DefaultMaxWriteBytes
}

// mountFS of a module: the file system of each mount, made once. A
// read-only mount's is shared by every call; a read-write mount's is
// wrapped for each call (and each snapshot run) in a budgetFS of its own.
type builtMount struct {
	m  Mount
	fs experimentalsys.FS
}

// hasWritable reports whether any mount is read-write.
func hasWritable(ms []builtMount) bool {
	for _, b := range ms {
		if !b.m.ReadOnly {
			return true
		}
	}
	return false
}

// fsConfig is the file-system configuration of one run: the mounts, each
// read-write one behind a fresh write budget, returned in budgets.
func fsConfig(ms []builtMount) (wazero.FSConfig, []*writeBudget) {
	cfg := wazero.NewFSConfig()
	var budgets []*writeBudget
	for _, b := range ms {
		f := b.fs
		if !b.m.ReadOnly {
			wb := &writeBudget{limit: b.m.writeLimit(), mount: b.m.GuestPath}
			budgets = append(budgets, wb)
			f = &budgetFS{FS: f, b: wb}
		}
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(f, b.m.GuestPath)
	}
	return cfg, budgets
}

// writeBudget is what one run may still write to one read-write mount:
// the bytes of every write and the growth of every truncate count, so a
// guest cannot fill the host's disk (a snapshot run once wrote 3.6 GB). A
// write that would pass the budget fails as a whole: wazero has no ENOSPC,
// so the guest sees EIO, and the host says why in the call's error and its
// log (spent).
type writeBudget struct {
	limit int64
	mount string // the guest path, for messages
	used  atomic.Int64
	// entries counts the files, directories and links the run created
	// (create).
	entries atomic.Int64
	hit     atomic.Bool
}

// take charges n bytes, or reports that they do not fit.
func (b *writeBudget) take(n int64) bool {
	if n <= 0 {
		return true
	}
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		b.hit.Store(true)
		return false
	}
	return true
}

// spent describes the budgets a run hit, or is "".
func spent(budgets []*writeBudget) string {
	msg := ""
	for _, b := range budgets {
		if b.hit.Load() {
			if msg != "" {
				msg += "; "
			}
			msg += fmt.Sprintf("its writes to %s reached the limit of %s (mount max_write_bytes); the writes beyond it failed (EIO)", b.mount, FormatBytes(b.limit))
		}
	}
	return msg
}

// errNoSpace is the error of a write beyond the budget; wazero reports
// it to the guest as EIO.
const errNoSpace = experimentalsys.EIO

// budgetFS is a read-write mount behind a writeBudget.
type budgetFS struct {
	experimentalsys.FS
	b *writeBudget
}

// OpenFile implements experimentalsys.FS. Creating a file is an entry
// (create). Opening with O_TRUNC frees nothing of the budget: it counts
// what is written, not what is kept.
func (f *budgetFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if flag&experimentalsys.O_CREAT != 0 && !f.create(p, 0) {
		return nil, errNoSpace
	}
	file, errno := f.FS.OpenFile(p, flag, perm)
	if errno != 0 {
		return nil, errno
	}
	return &budgetFile{File: file, b: f.b}, 0
}

// budgetFile is a file of a budgetFS.
type budgetFile struct {
	experimentalsys.File
	b *writeBudget
}

// Write implements experimentalsys.File.
func (f *budgetFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if !f.b.take(int64(len(buf))) {
		return 0, errNoSpace
	}
	n, errno := f.File.Write(buf)
	f.b.used.Add(int64(n - len(buf)))
	return n, errno
}

// Pwrite implements experimentalsys.File.
func (f *budgetFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if !f.b.take(int64(len(buf))) {
		return 0, errNoSpace
	}
	n, errno := f.File.Pwrite(buf, off)
	f.b.used.Add(int64(n - len(buf)))
	return n, errno
}

// Truncate implements experimentalsys.File: growing a file counts as
// writing the bytes it grows by.
func (f *budgetFile) Truncate(size int64) experimentalsys.Errno {
	st, errno := f.File.Stat()
	if errno != 0 {
		return errno
	}
	grow := size - st.Size
	if !f.b.take(grow) {
		return errNoSpace
	}
	if errno := f.File.Truncate(size); errno != 0 {
		if grow > 0 {
			f.b.used.Add(-grow)
		}
		return errno
	}
	return 0
}

// entryCost is what one new file, directory or link counts against the
// budget (a block and an inode on most file systems): a run may create
// at most limit/entryCost entries in a mount, so that a guest cannot fill
// the disk, or its inodes, with entries that hold no bytes. Entries are
// counted apart from the bytes, which stay exact.
const entryCost = 4096

// create charges the creation of an entry at p, when there is none yet;
// extra bytes (a link's target) count as written.
func (f *budgetFS) create(p string, extra int64) bool {
	if _, errno := f.FS.Lstat(p); errno != experimentalsys.ENOENT {
		return true // there already, or the call below fails as it will
	}
	if f.b.entries.Add(1) > max(f.b.limit/entryCost, 1) {
		f.b.entries.Add(-1)
		f.b.hit.Store(true)
		return false
	}
	return f.b.take(extra)
}

// Mkdir implements experimentalsys.FS: a new directory is an entry.
func (f *budgetFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if !f.create(p, 0) {
		return errNoSpace
	}
	return f.FS.Mkdir(p, perm)
}

// Symlink implements experimentalsys.FS: a new link is an entry, and its
// target's length is written.
func (f *budgetFS) Symlink(oldPath, linkName string) experimentalsys.Errno {
	if !f.create(linkName, int64(len(oldPath))) {
		return errNoSpace
	}
	return f.FS.Symlink(oldPath, linkName)
}

// Link implements experimentalsys.FS: a new name is an entry.
func (f *budgetFS) Link(oldPath, newPath string) experimentalsys.Errno {
	if !f.create(newPath, 0) {
		return errNoSpace
	}
	return f.FS.Link(oldPath, newPath)
}
