package host

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// DefaultMaxDiskBytes is the quota of a read-write mount, what it may keep
// across calls, when its policy sets no max_disk_bytes: sixteen calls'
// default write budgets (1 GiB).
const DefaultMaxDiskBytes = 16 * DefaultMaxWriteBytes

// diskLimit is the mount's quota: its MaxDiskBytes, or the default.
func (m Mount) diskLimit() int64 {
	if m.MaxDiskBytes > 0 {
		return m.MaxDiskBytes
	}
	return DefaultMaxDiskBytes
}

// diskUsage is what the tree under one read-write mount's host directory
// holds, as the quota counts it: the apparent size of every regular file
// (its length, holes included, once per inode whatever its names) plus
// entryCost per name (file, directory, link). It is counted once when a
// module mounting the directory is loaded (count), then kept by the
// writes, truncates, creations and removals the host carries out; every
// module mounting the same directory shares it (Engine.diskUsage).
//
// The count errs only upwards while the server runs: a growth is charged
// before it is made, under a lock of its inode that every shrink takes
// too; a removal frees its name at once and its file's bytes once no run
// that could hold it open is left (pending), and a file's bytes are freed
// only with its last name. What it does not see: files changed outside
// wasmcp, and bytes an open file grew by after its last name went; a
// reload counts the tree again.
type diskUsage struct {
	root string
	used atomic.Int64

	// gate: every operation holds it for reading, a count for writing.
	gate sync.RWMutex
	// inodes serialize the size changes of one inode (by its number).
	inodes [64]sync.Mutex
	// names serializes removals, renames and links: a name's link
	// count and size, read before, hold when it goes.
	names sync.Mutex

	mu      sync.Mutex
	seq     uint64              // the last run begun
	runs    map[uint64]struct{} // the runs going on
	pending []pendingFree       // in seq order
	// detached are the inodes whose last name was removed while a run
	// may hold them open: their truncates free nothing (their bytes
	// are in pending).
	detached map[sys.Inode]struct{}
}

// pendingFree is a removed file's bytes, freed once every run that had
// begun by the removal (seq) has ended.
type pendingFree struct {
	seq   uint64
	ino   sys.Inode
	bytes int64
}

// diskUsages is the engine's diskUsage of each read-write mount's host
// directory.
type diskUsages struct {
	mu sync.Mutex
	m  map[string]*diskUsage
}

// diskUsage returns the usage of the directory root, shared by every
// module that mounts it, counting its tree again (a module's load or
// reload is when a count drifted by writers outside wasmcp is corrected).
func (e *Engine) diskUsage(root string) *diskUsage {
	e.disks.mu.Lock()
	u := e.disks.m[root]
	if u == nil {
		if e.disks.m == nil {
			e.disks.m = map[string]*diskUsage{}
		}
		u = &diskUsage{root: root, runs: map[uint64]struct{}{}, detached: map[sys.Inode]struct{}{}}
		e.disks.m[root] = u
	}
	e.disks.mu.Unlock()
	u.count()
	return u
}

// count sets the usage to what the tree holds now. Unreadable parts count
// as nothing (the guest cannot read them either).
func (u *diskUsage) count() {
	u.gate.Lock()
	defer u.gate.Unlock()
	var total int64
	seen := map[uint64]bool{}
	_ = filepath.WalkDir(u.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == u.root {
			return nil
		}
		total += entryCost
		if !d.Type().IsRegular() {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return nil
		}
		if ino := inodeOf(st); ino != 0 && linksOf(st) > 1 {
			if seen[ino] {
				return nil
			}
			seen[ino] = true
		}
		total += st.Size()
		return nil
	})
	u.used.Store(total)
	u.mu.Lock()
	u.pending = nil
	clear(u.detached)
	u.mu.Unlock()
}

// begin registers a run that may open files under the mount.
func (u *diskUsage) begin() uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seq++
	u.runs[u.seq] = struct{}{}
	return u.seq
}

// end is the end of run seq, its files closed: the bytes of files
// removed while it may have held them are freed once no earlier run is
// left.
func (u *diskUsage) end(seq uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.runs, seq)
	oldest := u.seq + 1
	for s := range u.runs {
		oldest = min(oldest, s)
	}
	n := 0
	for _, p := range u.pending {
		if p.seq >= oldest {
			break
		}
		u.used.Add(-p.bytes)
		delete(u.detached, p.ino)
		n++
	}
	u.pending = u.pending[n:]
}

// detach defers the freeing of a removed file's bytes until the runs
// going on have ended (one of them may hold the file open).
func (u *diskUsage) detach(ino sys.Inode, bytes int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.runs) == 0 {
		u.used.Add(-bytes)
		return
	}
	u.pending = append(u.pending, pendingFree{seq: u.seq, ino: ino, bytes: bytes})
	u.detached[ino] = struct{}{}
}

// isDetached reports whether ino's bytes wait in pending.
func (u *diskUsage) isDetached(ino sys.Inode) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.detached[ino]
	return ok
}

// quota is one run's view of a mount's diskUsage: its limit, and whether
// the run met it.
type quota struct {
	u     *diskUsage
	limit int64
	run   uint64
	hit   atomic.Bool
}

// take charges n bytes to the usage, or reports that they do not fit.
func (q *quota) take(n int64) bool {
	if n <= 0 {
		return true
	}
	if q.u.used.Add(n) > q.limit {
		q.u.used.Add(-n)
		q.hit.Store(true)
		return false
	}
	return true
}

// free gives n bytes back.
func (q *quota) free(n int64) {
	if n > 0 {
		q.u.used.Add(-n)
	}
}

// endRuns ends the runs of budgets on their mounts' usage (after the
// run's instance, and so its files, was closed).
func endRuns(budgets []*writeBudget) {
	for _, b := range budgets {
		b.q.u.end(b.q.run)
	}
}

// grow carries out op, a write of n bytes at off (off < 0: at the file's
// position; an append at its end), charging what it grows the file by
// first; what op did not write is given back.
func (f *budgetFile) grow(off int64, n int, op func() (int, experimentalsys.Errno)) (int, experimentalsys.Errno) {
	q := &f.b.q
	q.u.gate.RLock()
	defer q.u.gate.RUnlock()
	l := &q.u.inodes[f.ino%uint64(len(q.u.inodes))]
	l.Lock()
	defer l.Unlock()
	st, errno := f.File.Stat()
	if errno != 0 {
		return 0, errno
	}
	if !st.Mode.IsRegular() {
		return op() // a device or FIFO the operator placed: it keeps nothing
	}
	if f.File.IsAppend() {
		off = st.Size
	} else if off < 0 {
		if off, errno = f.File.Seek(0, io.SeekCurrent); errno != 0 {
			return 0, errno
		}
	}
	g := max(0, off+int64(n)-st.Size)
	if !q.take(g) {
		f.b.refused.Store(true)
		return 0, errNoSpace
	}
	k, errno := op()
	q.free(g - max(0, off+int64(k)-st.Size))
	return k, errno
}

// resize truncates the file to size, charging what it grows by and
// freeing what it shrinks by (unless its bytes wait in pending).
func (f *budgetFile) resize(size int64) experimentalsys.Errno {
	q := &f.b.q
	q.u.gate.RLock()
	defer q.u.gate.RUnlock()
	l := &q.u.inodes[f.ino%uint64(len(q.u.inodes))]
	l.Lock()
	defer l.Unlock()
	st, errno := f.File.Stat()
	if errno != 0 {
		return errno
	}
	g := size - st.Size
	if !f.b.take(g) {
		f.b.refused.Store(true)
		return errNoSpace
	}
	if !q.take(g) {
		f.b.used.Add(-g)
		f.b.refused.Store(true)
		return errNoSpace
	}
	if errno := f.File.Truncate(size); errno != 0 {
		if g > 0 {
			f.b.used.Add(-g)
			q.free(g)
		}
		return errno
	}
	if g < 0 && !q.u.isDetached(f.ino) {
		q.free(-g)
	}
	return 0
}

// removeName removes the name p with op (an unlink or rmdir). It holds
// names, so that the link count read is the one the removal meets.
func (f *budgetFS) removeName(p string, op func() experimentalsys.Errno) experimentalsys.Errno {
	u := f.b.q.u
	u.gate.RLock()
	defer u.gate.RUnlock()
	u.names.Lock()
	defer u.names.Unlock()
	st, serr := f.FS.Lstat(p)
	if errno := op(); errno != 0 {
		return errno
	}
	if serr == 0 {
		f.removed(st)
	}
	return 0
}

// removed frees a name that went: its entry, and its file's bytes when it
// was the file's last name.
func (f *budgetFS) removed(st sys.Stat_t) {
	f.b.q.free(entryCost)
	if st.Mode.IsRegular() && st.Nlink <= 1 {
		f.b.q.u.detach(st.Ino, st.Size)
	}
}

// Unlink implements experimentalsys.FS.
func (f *budgetFS) Unlink(p string) experimentalsys.Errno {
	return f.removeName(p, func() experimentalsys.Errno { return f.FS.Unlink(p) })
}

// Rmdir implements experimentalsys.FS.
func (f *budgetFS) Rmdir(p string) experimentalsys.Errno {
	return f.removeName(p, func() experimentalsys.Errno { return f.FS.Rmdir(p) })
}

// Rename implements experimentalsys.FS: a target that exists is removed
// by it (unless it is the same file under another name, which POSIX
// leaves as it is).
func (f *budgetFS) Rename(from, to string) experimentalsys.Errno {
	u := f.b.q.u
	u.gate.RLock()
	defer u.gate.RUnlock()
	u.names.Lock()
	defer u.names.Unlock()
	src, errno := f.FS.Lstat(from)
	if errno != 0 {
		return errno
	}
	dst, derr := f.FS.Lstat(to)
	if errno := f.FS.Rename(from, to); errno != 0 {
		return errno
	}
	if derr == 0 && dst.Ino != src.Ino {
		f.removed(dst)
	}
	return 0
}

// openTrunc opens p without O_TRUNC, then truncates it to nothing as
// resize does, so that the bytes it frees are counted under its inode's
// lock.
func (f *budgetFS) openTrunc(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if flag&(experimentalsys.O_RDWR|experimentalsys.O_WRONLY) == 0 {
		// O_TRUNC on a file opened for reading only: POSIX leaves it
		// unspecified, Linux truncates; refused here.
		return nil, experimentalsys.EINVAL
	}
	file, errno := f.open(p, flag&^experimentalsys.O_TRUNC, perm)
	if errno != 0 {
		return nil, errno
	}
	if st, errno := file.Stat(); errno == 0 && st.Mode.IsRegular() {
		if errno := file.(*budgetFile).resize(0); errno != 0 {
			_ = file.Close()
			return nil, errno
		}
	}
	return file, 0
}

// quotaMessage is what spent says of a run that met its mount's quota.
func quotaMessage(b *writeBudget) string {
	return fmt.Sprintf("its writes to %s would make the mount keep more than its quota of %s (mount max_disk_bytes; it holds %s); the writes beyond it failed (ENOSPC)",
		b.mount, FormatBytes(b.q.limit), FormatBytes(max(b.q.u.used.Load(), 0)))
}

// warnOverQuota logs the read-write mounts of a module that hold more than
// their quota at its load: writes that grow them fail until they are
// cleaned.
func warnOverQuota(ctx context.Context, log *slog.Logger, module string, ms []builtMount) {
	for _, b := range ms {
		if b.usage == nil {
			continue
		}
		if used := b.usage.used.Load(); used > b.m.diskLimit() {
			log.WarnContext(ctx, "a read-write mount holds more than its quota: writes that grow it fail", "module", module,
				"mount", b.m.GuestPath, "holds", FormatBytes(used), "quota", FormatBytes(b.m.diskLimit()), "key", "max_disk_bytes")
		}
	}
}

// nestedWritable refuses read-write mounts of one module whose host
// directories nest: a rename inside the outer one would move what the
// inner one's quota counted out of its tree, uncounted by the outer one.
// The same directory twice shares one count and is allowed.
func nestedWritable(ms []builtMount) error {
	for i, a := range ms {
		for _, b := range ms[i+1:] {
			if a.m.ReadOnly || b.m.ReadOnly {
				continue
			}
			ra, rb := a.fs.(*mountFS).root, b.fs.(*mountFS).root
			if ra != rb && (within(ra, rb) || within(rb, ra)) {
				return fmt.Errorf("read-write mounts %s and %s nest (%s, %s): their quotas would not see renames between them; mount one directory, or two apart", a.m.GuestPath, b.m.GuestPath, a.m.HostPath, b.m.HostPath)
			}
		}
	}
	return nil
}

// within reports whether p is under dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
