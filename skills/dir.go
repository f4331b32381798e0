package skills

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/wasmcp/wasmcp/internal/regfile"
)

// LoadDir is LoadDirContext without a context or skills read before.
func LoadDir(dir string) (loaded []*Skill, refused []error, err error) {
	return LoadDirContext(context.Background(), dir, nil)
}

// LoadDirContext reads a directory of skills: every directory under dir
// (at most MaxDepth levels down) that holds a SKILL.md is a skill whose
// path is its directory's path relative to dir, and whose files are the
// regular files below it. Entries whose name begins with '.' are ignored;
// symbolic links are not followed (reads cannot leave dir), and a file
// with more than one hard link refuses its skill (its other name may be
// anywhere on the disk). A skill that breaks a rule is left out and its
// error returned in refused; err is set only when dir itself cannot be
// read, or ctx ends (the read stops at the next file).
//
// Only SKILL.md is kept in memory: each other file is read to check and
// digest it, then read again from disk when it is served (File.Contents).
// A skill of prev (an earlier read of dir) whose files' names, sizes,
// modes, inodes and modification times are all unchanged is kept as it
// was, not read again.
func LoadDirContext(ctx context.Context, dir string, prev []*Skill) (loaded []*Skill, refused []error, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("skills directory: %w", err)
	}
	defer root.Close()
	fsys := root.FS()
	if _, err := fs.ReadDir(fsys, "."); err != nil {
		return nil, nil, fmt.Errorf("skills directory: %w", err)
	}
	before := make(map[string]*Skill, len(prev))
	for _, s := range prev {
		if s.dir == dir {
			before[s.Path] = s
		}
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, werr error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
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
		fp := skillPrint(fsys, p)
		if old, ok := before[p]; ok && old.fp == fp {
			loaded = append(loaded, old)
			return fs.SkipDir
		}
		s, err := readSkill(ctx, root, dir, p)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			refused = append(refused, err)
		} else {
			s.dir, s.fp = dir, fp
			loaded = append(loaded, s)
		}
		return fs.SkipDir
	})
	if err != nil {
		return nil, nil, fmt.Errorf("skills directory: %w", err)
	}
	return loaded, refused, nil
}

// readSkill reads the files of the skill at directory p of fsys (the
// skills directory dir), refusing it as soon as it exceeds the limits.
func readSkill(ctx context.Context, root *os.Root, dir, p string) (*Skill, error) {
	fsys := root.FS()
	if err := CheckPath(p); err != nil {
		return nil, err
	}
	var files []Input
	var total int64
	err := fs.WalkDir(fsys, p, func(q string, d fs.DirEntry, werr error) error {
		if werr != nil {
			return werr
		}
		if err := ctx.Err(); err != nil {
			return err
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
		data, err := readFile(root, q, MaxBytes-total)
		if err != nil {
			return err
		}
		total += int64(len(data))
		rel := strings.TrimPrefix(q, p+"/")
		files = append(files, Input{Path: rel, Data: data, Open: reopen(dir, q, int64(len(data)))})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", p, err)
	}
	return New(p, files)
}

// readFile reads the regular file q of fsys from one opened descriptor:
// what is checked (a regular file with one link, within max bytes) is
// what is read.
//
// It opens without blocking: a FIFO put in a file's place (after the walk
// saw a regular file, or after the skill was loaded) must not hold the
// request that serves it, and an OS thread with it, for ever.
func readFile(root *os.Root, q string, max int64) ([]byte, error) {
	f, st, err := regfile.OpenIn(root, q)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if n := linkCount(st); n > 1 {
		return nil, fmt.Errorf("%s has %d hard links: a skill file may have only its own name (another may be outside the skills directory)", q, n)
	}
	data, err := regfile.ReadAll(f, st, max)
	if errors.Is(err, regfile.ErrTooLarge) {
		return nil, fmt.Errorf("larger than %d bytes", MaxBytes)
	}
	return data, err
}

// reopen reads file q of the skills directory dir again when it is served,
// with the checks of readFile and no more than size bytes (File.Contents
// then checks the digest).
func reopen(dir, q string, size int64) func() ([]byte, error) {
	return func() ([]byte, error) {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		return readFile(root, q, size)
	}
}

// skillPrint summarizes what a stat tells of every entry of the skill at
// p: whether anything in it changed since it was read.
func skillPrint(fsys fs.FS, p string) [32]byte {
	h := sha256.New()
	var buf [8]byte
	num := func(v int64) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	_ = fs.WalkDir(fsys, p, func(q string, d fs.DirEntry, werr error) error {
		io.WriteString(h, q)
		h.Write([]byte{0})
		if werr != nil {
			io.WriteString(h, werr.Error())
			return nil
		}
		if info, err := d.Info(); err == nil {
			num(int64(info.Mode()))
			num(info.Size())
			num(info.ModTime().UnixNano())
			num(int64(inode(info)))
			num(int64(linkCount(info)))
		}
		return nil
	})
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
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
