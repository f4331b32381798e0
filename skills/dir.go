package skills

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// LoadDir reads a directory of skills: every directory under dir (at most
// MaxDepth levels down) that holds a SKILL.md is a skill whose path is its
// directory's path relative to dir, and whose files are the regular files
// below it. Entries whose name begins with '.' are ignored; symbolic links
// are not followed (reads cannot leave dir). A skill that breaks a rule is
// left out and its error returned in refused; err is set only when dir
// itself cannot be read.
func LoadDir(dir string) (loaded []*Skill, refused []error, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("skills directory: %w", err)
	}
	defer root.Close()
	fsys := root.FS()
	if _, err := fs.ReadDir(fsys, "."); err != nil {
		return nil, nil, fmt.Errorf("skills directory: %w", err)
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, werr error) error {
		if werr != nil {
			if p == "." {
				return werr
			}
			refused = append(refused, fmt.Errorf("skills directory: %w", werr))
			return nil
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || !d.IsDir() {
			return nil
		}
		if strings.Count(p, "/")+1 > MaxDepth {
			return fs.SkipDir
		}
		st, err := fs.Stat(fsys, path.Join(p, Manifest))
		if err != nil || !st.Mode().IsRegular() {
			return nil // a group directory: look further down
		}
		s, err := readSkill(fsys, p)
		if err != nil {
			refused = append(refused, err)
		} else {
			loaded = append(loaded, s)
		}
		return fs.SkipDir
	})
	if err != nil {
		return nil, nil, fmt.Errorf("skills directory: %w", err)
	}
	return loaded, refused, nil
}

// readSkill reads the files of the skill at directory p of fsys, refusing it
// as soon as it exceeds the limits.
func readSkill(fsys fs.FS, p string) (*Skill, error) {
	if err := CheckPath(p); err != nil {
		return nil, err
	}
	var files []Input
	var total int64
	err := fs.WalkDir(fsys, p, func(q string, d fs.DirEntry, werr error) error {
		if werr != nil {
			return werr
		}
		if q != p && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil // directories are walked; links and devices are not served
		}
		if len(files) == MaxFiles {
			return fmt.Errorf("more than %d files", MaxFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > MaxBytes {
			return fmt.Errorf("larger than %d bytes", MaxBytes)
		}
		f, err := fsys.Open(q)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
		f.Close()
		if err != nil {
			return err
		}
		files = append(files, Input{Path: strings.TrimPrefix(q, p+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", p, err)
	}
	return New(p, files)
}

// Fingerprint summarizes the names, sizes, modes and modification times of
// every entry under dir (down to MaxDepth levels plus the depth of a
// skill's files), so that a watcher can tell whether anything changed
// without reading files. Errors reading parts of the tree are part of the
// fingerprint.
func Fingerprint(dir string) ([32]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return [32]byte{}, err
	}
	defer root.Close()
	h := sha256.New()
	var buf [8]byte
	num := func(v int64) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, werr error) error {
		io.WriteString(h, p)
		h.Write([]byte{0})
		if werr != nil {
			if p == "." {
				return werr
			}
			io.WriteString(h, werr.Error())
			return nil
		}
		if info, err := d.Info(); err == nil {
			num(int64(info.Mode()))
			num(info.Size())
			num(info.ModTime().UnixNano())
		}
		return nil
	})
	if err != nil {
		return [32]byte{}, err
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// Dirs lists dir and its subdirectories (not following links, not hidden
// ones), for a watcher to watch each.
func Dirs(dir string) []string {
	out := []string{dir}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return out
	}
	defer root.Close()
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, werr error) error {
		if werr != nil || p == "." {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			out = append(out, dir+string(os.PathSeparator)+p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}
