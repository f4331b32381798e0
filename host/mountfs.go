package host

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// mountFS is a policy mount: wazero's directory file system with symbolic
// links taken out of the guest's reach. wazero rejects ".." and absolute
// paths, but resolves the rest on the host, where the kernel follows
// symbolic links — so a guest with a read-write mount could create
// `esc -> ../../..` and read `esc/etc/passwd`. mountFS closes that:
//
//   - a guest cannot create a symbolic link (EPERM);
//   - no path the guest names is resolved through a symbolic link, not
//     even one the operator placed in the directory (EPERM), except that
//     lstat, readlink and unlink may name one as their last component;
//   - a guest cannot move or hard-link a symbolic link (EPERM).
//
// The check and the operation are two steps. Guests cannot create or move
// links, so another instance sharing the mount cannot slip one between
// them; what remains is a link the operator placed in a read-write mount
// inside a directory a guest renames at the right moment, which is why
// docs/policy.md says a read-write mount must hold no links pointing out of
// it. Everything else — files, directories, reads, writes — is wazero's
// own implementation.
type mountFS struct {
	experimentalsys.FS
	root string // the host directory, symlinks in it resolved
}

// newMountFS returns the file system for one mount.
func newMountFS(m Mount) (experimentalsys.FS, error) {
	root, err := filepath.EvalSymlinks(m.HostPath)
	if err != nil {
		return nil, err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	var f experimentalsys.FS = &mountFS{FS: sysfs.DirFS(root), root: root}
	if m.ReadOnly {
		f = &sysfs.ReadFS{FS: f}
	}
	return f, nil
}

// through reports EPERM when resolving p would go through a symbolic
// link: any component but the last, and the last too when last is set.
// Paths come from wazero already cleaned, relative and free of "..".
func (f *mountFS) through(p string, last bool) experimentalsys.Errno {
	p = strings.Trim(p, "/")
	if p == "" || p == "." {
		return 0
	}
	if p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
		return experimentalsys.EPERM
	}
	cur := f.root
	for rest := p; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		if part == "" || part == "." {
			continue
		}
		if rest == "" && !last {
			return 0
		}
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if err != nil {
			// Missing: the operation itself reports it (or creates it).
			return 0
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return experimentalsys.EPERM
		}
	}
	return 0
}

// OpenFile implements experimentalsys.FS. O_NOFOLLOW on a final link is
// left to the kernel (ELOOP).
func (f *mountFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if e := f.through(p, flag&experimentalsys.O_NOFOLLOW == 0); e != 0 {
		return nil, e
	}
	return f.FS.OpenFile(p, flag, perm)
}

// Lstat implements experimentalsys.FS.
func (f *mountFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if e := f.through(p, false); e != 0 {
		return sys.Stat_t{}, e
	}
	return f.FS.Lstat(p)
}

// Stat implements experimentalsys.FS.
func (f *mountFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if e := f.through(p, true); e != 0 {
		return sys.Stat_t{}, e
	}
	return f.FS.Stat(p)
}

// Mkdir implements experimentalsys.FS.
func (f *mountFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if e := f.through(p, false); e != 0 {
		return e
	}
	return f.FS.Mkdir(p, perm)
}

// Chmod implements experimentalsys.FS.
func (f *mountFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if e := f.through(p, true); e != 0 {
		return e
	}
	return f.FS.Chmod(p, perm)
}

// Rename implements experimentalsys.FS.
func (f *mountFS) Rename(from, to string) experimentalsys.Errno {
	if e := f.through(from, true); e != 0 {
		return e
	}
	if e := f.through(to, false); e != 0 {
		return e
	}
	return f.FS.Rename(from, to)
}

// Rmdir implements experimentalsys.FS.
func (f *mountFS) Rmdir(p string) experimentalsys.Errno {
	if e := f.through(p, false); e != 0 {
		return e
	}
	return f.FS.Rmdir(p)
}

// Unlink implements experimentalsys.FS.
func (f *mountFS) Unlink(p string) experimentalsys.Errno {
	if e := f.through(p, false); e != 0 {
		return e
	}
	return f.FS.Unlink(p)
}

// Link implements experimentalsys.FS. A hard link to a symbolic link
// would be a second name for it, so the source's last component is
// checked too.
func (f *mountFS) Link(oldPath, newPath string) experimentalsys.Errno {
	if e := f.through(oldPath, true); e != 0 {
		return e
	}
	if e := f.through(newPath, false); e != 0 {
		return e
	}
	return f.FS.Link(oldPath, newPath)
}

// Symlink implements experimentalsys.FS: guests cannot create links.
func (f *mountFS) Symlink(_, _ string) experimentalsys.Errno {
	return experimentalsys.EPERM
}

// Readlink implements experimentalsys.FS.
func (f *mountFS) Readlink(p string) (string, experimentalsys.Errno) {
	if e := f.through(p, false); e != 0 {
		return "", e
	}
	return f.FS.Readlink(p)
}

// Utimens implements experimentalsys.FS.
func (f *mountFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if e := f.through(p, true); e != 0 {
		return e
	}
	return f.FS.Utimens(p, atim, mtim)
}
