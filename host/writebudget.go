package host

import (
	"context"
	"fmt"
	"io/fs"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
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
	m     Mount
	fs    experimentalsys.FS
	usage *diskUsage // a read-write mount's, shared with every mount of its directory (diskquota.go)
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
// read-write one behind a fresh write budget and its quota, returned in
// budgets; endRuns(budgets) must follow the run's end.
func fsConfig(ms []builtMount) (wazero.FSConfig, []*writeBudget) {
	cfg := wazero.NewFSConfig()
	var budgets []*writeBudget
	for _, b := range ms {
		f := b.fs
		if !b.m.ReadOnly {
			wb := &writeBudget{limit: b.m.writeLimit(), mount: b.m.GuestPath,
				q: quota{u: b.usage, limit: b.m.diskLimit(), run: b.usage.begin()}}
			budgets = append(budgets, wb)
			f = &budgetFS{FS: f, b: wb}
		}
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(f, b.m.GuestPath)
	}
	return cfg, budgets
}

// writeBudget is what one run may still write to one read-write mount:
// the bytes of every write and the growth of every truncate count, so a
// guest cannot fill the host's disk (a snapshot run once wrote 3.6 GB);
// q is the mount's quota, what it may keep across runs. A write that would
// pass either fails as a whole: the guest sees ENOSPC (noSpaceListener),
// and the host says why in the call's error and its log (spent).
type writeBudget struct {
	limit int64
	mount string // the guest path, for messages
	used  atomic.Int64
	// entries counts the files, directories and links the run created
	// (create).
	entries atomic.Int64
	hit     atomic.Bool
	q       quota
	// refused is set by a refusal, and cleared by the listener that
	// turns the EIO wazero reports of it into ENOSPC.
	refused atomic.Bool
}

// take charges n bytes, or reports that they do not fit.
func (b *writeBudget) take(n int64) bool {
	if n <= 0 {
		return true
	}
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		b.hit.Store(true)
		b.refused.Store(true)
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
			msg += fmt.Sprintf("its writes to %s reached the limit of %s (mount max_write_bytes); the writes beyond it failed (ENOSPC)", b.mount, FormatBytes(b.limit))
		}
		if b.q.hit.Load() {
			if msg != "" {
				msg += "; "
			}
			msg += quotaMessage(b)
		}
	}
	return msg
}

// errNoSpace is the error of a write beyond the budget or the quota:
// wazero has no ENOSPC and reports it as EIO, which noSpaceListener turns
// into ENOSPC.
const errNoSpace = experimentalsys.EIO

// budgetFS is a read-write mount behind a writeBudget.
type budgetFS struct {
	experimentalsys.FS
	b *writeBudget
}

// OpenFile implements experimentalsys.FS. Creating a file is an entry
// (create). Opening with O_TRUNC frees nothing of the budget (it counts
// what is written, not what is kept) but frees the file's bytes from the
// quota (openTrunc).
func (f *budgetFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if flag&experimentalsys.O_TRUNC != 0 {
		return f.openTrunc(p, flag, perm)
	}
	return f.open(p, flag, perm)
}

// open is OpenFile without O_TRUNC. A creation is charged exactly: a
// name seen absent is created with O_EXCL (charged first, given back on
// EEXIST); a name seen present is opened without O_CREAT (ENOENT: it was
// removed meanwhile, so it is tried again), never created uncharged.
func (f *budgetFS) open(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	file, errno := f.openCreate(p, flag, perm)
	if errno != 0 {
		return nil, errno
	}
	st, errno := file.Stat()
	if errno != 0 {
		_ = file.Close()
		return nil, errno
	}
	return &budgetFile{File: file, b: f.b, ino: st.Ino}, 0
}

// createTries bounds openCreate's rounds against a name that another run
// creates and removes again and again.
const createTries = 64

// openCreate opens p, charging a creation only when it creates it.
func (f *budgetFS) openCreate(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if flag&experimentalsys.O_CREAT == 0 {
		return f.FS.OpenFile(p, flag, perm)
	}
	for range createTries {
		created, ok := f.create(p, 0)
		if !ok {
			return nil, errNoSpace
		}
		if created || flag&experimentalsys.O_EXCL != 0 {
			file, errno := f.FS.OpenFile(p, flag|experimentalsys.O_EXCL, perm)
			if errno == 0 || !created {
				return file, errno
			}
			f.uncreate()
			if errno != experimentalsys.EEXIST || flag&experimentalsys.O_EXCL != 0 {
				return nil, errno
			}
			continue // created meanwhile by another run: open it
		}
		file, errno := f.FS.OpenFile(p, flag&^experimentalsys.O_CREAT, perm)
		if errno != experimentalsys.ENOENT {
			return file, errno
		}
		// removed meanwhile: create it, charged
	}
	return nil, experimentalsys.EAGAIN
}

// budgetFile is a file of a budgetFS.
type budgetFile struct {
	experimentalsys.File
	b   *writeBudget
	ino sys.Inode // for its lock in the mount's usage
}

// Write implements experimentalsys.File.
func (f *budgetFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if !f.b.take(int64(len(buf))) {
		return 0, errNoSpace
	}
	n, errno := f.grow(-1, len(buf), func() (int, experimentalsys.Errno) { return f.File.Write(buf) })
	f.b.used.Add(int64(n - len(buf)))
	return n, errno
}

// Pwrite implements experimentalsys.File.
func (f *budgetFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if !f.b.take(int64(len(buf))) {
		return 0, errNoSpace
	}
	n, errno := f.grow(off, len(buf), func() (int, experimentalsys.Errno) { return f.File.Pwrite(buf, off) })
	f.b.used.Add(int64(n - len(buf)))
	return n, errno
}

// Truncate implements experimentalsys.File: growing a file counts as
// writing the bytes it grows by.
func (f *budgetFile) Truncate(size int64) experimentalsys.Errno {
	return f.resize(size)
}

// entryCost is what one new file, directory or link counts against the
// budget (a block and an inode on most file systems): a run may create
// at most limit/entryCost entries in a mount, so that a guest cannot fill
// the disk, or its inodes, with entries that hold no bytes. Entries are
// counted apart from the bytes, which stay exact.
const entryCost = 4096

// create charges the creation of an entry at p, when there is none yet
// (created), to the run's entries and the mount's quota; extra bytes (a
// link's target) count as written. It reports false when they do not fit.
func (f *budgetFS) create(p string, extra int64) (created, ok bool) {
	if _, errno := f.FS.Lstat(p); errno != experimentalsys.ENOENT {
		return false, true // there already, or the call below fails as it will
	}
	if f.b.entries.Add(1) > max(f.b.limit/entryCost, 1) {
		f.b.entries.Add(-1)
		f.b.hit.Store(true)
		f.b.refused.Store(true)
		return false, false
	}
	if !f.b.take(extra) {
		return false, false
	}
	if !f.b.q.take(entryCost + extra) {
		f.b.refused.Store(true)
		return false, false
	}
	return true, true
}

// made completes a creation: the charge is given back when errno says
// the entry was not made.
func (f *budgetFS) made(created bool, extra int64, errno experimentalsys.Errno) experimentalsys.Errno {
	if created && errno != 0 {
		f.b.q.free(extra)
		f.uncreate()
	}
	return errno
}

// uncreate gives back the charge of a creation that did not happen.
func (f *budgetFS) uncreate() {
	f.b.q.free(entryCost)
	f.b.entries.Add(-1)
}

// Mkdir implements experimentalsys.FS: a new directory is an entry. A
// name seen present answers EEXIST without a mkdir (one after it was
// removed meanwhile would create it uncharged); seen present, then gone,
// it is tried again, charged.
func (f *budgetFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	for range createTries {
		created, ok := f.create(p, 0)
		if !ok {
			return errNoSpace
		}
		if created {
			return f.made(created, 0, f.FS.Mkdir(p, perm))
		}
		switch _, errno := f.FS.Lstat(p); errno {
		case 0:
			return experimentalsys.EEXIST
		case experimentalsys.ENOENT: // removed meanwhile
		default:
			return errno
		}
	}
	return experimentalsys.EAGAIN
}

// Symlink implements experimentalsys.FS: a new link is an entry, and its
// target's length is written.
func (f *budgetFS) Symlink(oldPath, linkName string) experimentalsys.Errno {
	created, ok := f.create(linkName, int64(len(oldPath)))
	if !ok {
		return errNoSpace
	}
	return f.made(created, int64(len(oldPath)), f.FS.Symlink(oldPath, linkName))
}

// Link implements experimentalsys.FS: a new name is an entry. It holds
// the usage's names: a removal of another name of the file must see the
// link count this makes.
func (f *budgetFS) Link(oldPath, newPath string) experimentalsys.Errno {
	u := f.b.q.u
	u.gate.RLock()
	defer u.gate.RUnlock()
	u.names.Lock()
	defer u.names.Unlock()
	created, ok := f.create(newPath, 0)
	if !ok {
		return errNoSpace
	}
	return f.made(created, 0, f.FS.Link(oldPath, newPath))
}

// writesKey carries a run's write budgets in the context its guest's
// functions see, for noSpaceListener.
type writesKey struct{}

// WASI's errno numbers (wasi_snapshot_preview1) of EIO and ENOSPC.
const (
	wasiEIO    = 29
	wasiENOSPC = 51
)

// noSpaceListener gives the guest ENOSPC for a write, truncate or creation
// a write budget or quota refused: wazero's errors have no ENOSPC, so the
// refusal leaves the WASI function as EIO, which After rewrites in its
// result when the run's budgets say they refused it (and only then: a
// real EIO stays one). Only the runtimes of modules with a read-write
// mount watch them (runtimeKey.writable).
type noSpaceListener struct{}

// Before implements experimental.FunctionListener.
func (noSpaceListener) Before(context.Context, api.Module, api.FunctionDefinition, []uint64, experimental.StackIterator) {
}

// After implements experimental.FunctionListener.
func (noSpaceListener) After(ctx context.Context, _ api.Module, _ api.FunctionDefinition, results []uint64) {
	if len(results) == 0 || results[0] != wasiEIO {
		return
	}
	ws, _ := ctx.Value(writesKey{}).([]*writeBudget)
	for _, b := range ws {
		if b.refused.Swap(false) {
			results[0] = wasiENOSPC
			return
		}
	}
}

// Abort implements experimental.FunctionListener.
func (noSpaceListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}

// wasiListeners is the listener factory of the WASI host module of the
// runtimes of modules with a read-write mount: fd_fdstat_get for MCP
// servers' stdin (stdinListener), and the functions a write budget or
// quota can refuse (noSpaceListener).
var wasiListeners = experimental.FunctionListenerFactoryFunc(func(def api.FunctionDefinition) experimental.FunctionListener {
	switch def.Name() {
	case "fd_fdstat_get":
		return stdinListener{}
	case "fd_write", "fd_pwrite", "fd_allocate", "fd_filestat_set_size", "path_open",
		"path_create_directory", "path_link", "path_symlink":
		return noSpaceListener{}
	}
	return nil
})

// stdinListeners is the listener factory of the WASI host module of the
// other runtimes: only fd_fdstat_get is watched.
var stdinListeners = experimental.FunctionListenerFactoryFunc(func(def api.FunctionDefinition) experimental.FunctionListener {
	if def.Name() == "fd_fdstat_get" {
		return stdinListener{}
	}
	return nil
})
