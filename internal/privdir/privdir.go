// Package privdir makes and checks the per-user directories wasmcp keeps
// on disk (the compilation cache, the task store): a directory another user
// owns or can write to could feed the server compiled native code or task
// records, so it is refused. It also bounds a cache directory's size.
package privdir

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Ensure creates dir (mode 0700, with its parents) when it does not exist
// and checks it with Check.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return Check(dir)
}

// Check refuses dir unless it is a directory owned by the current user
// that neither its group nor others may write to.
func Check(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return private(dir, st)
}

// private refuses a file or directory another user owns or that its group
// or others may write to.
func private(path string, st fs.FileInfo) error {
	if unixModes && st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by its group or by others (mode %v); refusing it: use a directory only this user can write (chmod go-w)", path, st.Mode().Perm())
	}
	if uid, mine, ok := owner(st); ok && !mine {
		return fmt.Errorf("%s is owned by user %d, not by this user; refusing it", path, uid)
	}
	return nil
}

// Fallback is the per-user directory name under the temporary directory,
// for a user without a home: never a fixed path another user could create
// first (and one created by someone else is refused by Check).
func Fallback(name string) string {
	return filepath.Join(os.TempDir(), name+"-"+userTag())
}

// Prune removes from dir, which must hold nothing but the caller's own
// files, every entry that is not private to this user (it could have been
// planted) and then the oldest files (by modification time) until the
// regular files left hold at most max bytes; max <= 0 only removes the
// foreign entries. A dir that does not exist is empty; one that is not
// private is an error. It returns the bytes and entries removed; files it
// cannot remove are skipped.
func Prune(dir string, max int64) (freed int64, removed int, err error) {
	type entry struct {
		path string
		size int64
		mod  int64
	}
	var files []entry
	var total int64
	walkErr := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		st, err := os.Lstat(path)
		if err != nil {
			return nil
		}
		if path == dir {
			return private(path, st)
		}
		if d.IsDir() {
			if private(path, st) != nil {
				if os.RemoveAll(path) == nil {
					removed++
				}
				return fs.SkipDir
			}
			return nil
		}
		if !st.Mode().IsRegular() || private(path, st) != nil {
			if os.Remove(path) == nil {
				removed++
			}
			return nil
		}
		files = append(files, entry{path, st.Size(), st.ModTime().UnixNano()})
		total += st.Size()
		return nil
	})
	if walkErr != nil {
		return 0, removed, walkErr
	}
	if max <= 0 || total <= max {
		return 0, removed, nil
	}
	slices.SortFunc(files, func(a, b entry) int { return cmp.Compare(a.mod, b.mod) })
	for _, f := range files {
		if total <= max {
			break
		}
		if os.Remove(f.path) == nil {
			total -= f.size
			freed += f.size
			removed++
		}
	}
	return freed, removed, nil
}
