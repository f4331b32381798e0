package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The on-disk caches (compiled code, descriptions, snapshots, module
// copies) are read back by a later process. What wazero reads it trusts:
// its checksum covers only the machine code, not the header before it, so
// a shifted function-offset table jumps into the middle of the code and a
// huge function count exhausts memory. Every entry therefore carries the
// project's own SHA-256, written when it is stored and checked before its
// bytes are used; an entry that does not match is a cache miss: it is
// removed and the thing is compiled, described or snapshotted again.
//
// The hash detects damage (disk corruption, a truncated write, an edit by
// hand or by a tool that does not know the format). It does not stop a
// writer who recomputes it: the cache directory is private to the user
// (privdir), and whoever writes as that user can replace the server too.

// sumSuffix names the file beside a compiled-code entry that holds the hex
// SHA-256 of the entry.
const sumSuffix = ".sha256"

// cacheWarner logs the first damaged entry of each cache once, and counts
// the rest, so a damaged cache directory does not flood the log.
type cacheWarner struct {
	log    *slog.Logger
	warned atomic.Bool
	count  atomic.Int64
}

// damaged notes a damaged entry at path, removed.
func (w *cacheWarner) damaged(cache, path, why string) {
	if w == nil {
		return
	}
	w.count.Add(1)
	if w.log == nil || !w.warned.CompareAndSwap(false, true) {
		return
	}
	w.log.Warn("cache entry damaged; removed, and its content made again (further damaged entries are not logged)",
		"cache", cache, "path", path, "reason", why)
}

// sealed prefixes content with its SHA-256 (hex) and a newline: the format
// of the description cache's files.
func sealed(content []byte) []byte {
	sum := sha256.Sum256(content)
	out := make([]byte, 0, hex.EncodedLen(len(sum))+1+len(content))
	out = hex.AppendEncode(out, sum[:])
	out = append(out, '\n')
	return append(out, content...)
}

// unseal checks a file written by sealed and returns its content.
func unseal(b []byte) ([]byte, bool) {
	n := hex.EncodedLen(sha256.Size)
	if len(b) < n+1 || b[n] != '\n' {
		return nil, false
	}
	var want [sha256.Size]byte
	if _, err := hex.Decode(want[:], b[:n]); err != nil {
		return nil, false
	}
	content := b[n+1:]
	got := sha256.Sum256(content)
	if got != want {
		return nil, false
	}
	return content, true
}

// codeGuard seals wazero's compilation cache: after each compilation it
// writes, beside every entry wazero added, the entry's SHA-256; before
// each compilation it checks every entry that changed since it was last
// checked (all of them, the first time) and removes an entry whose hash
// does not match or that has none. wazero names its entries by a key only
// it computes, so the guard watches the whole directory; the walk is a
// directory read and a stat per entry, and only new or changed entries are
// hashed.
type codeGuard struct {
	dir  string // the directory given to wazero.NewCompilationCacheWithDir
	warn *cacheWarner

	mu       sync.Mutex
	known    map[string]stamp // entries checked, and their stat then
	inflight int              // compilations running (their fresh entries are not sealed yet)
}

// stamp is what a stat tells of a file: a change of any part means the
// file is hashed again.
type stamp struct {
	size  int64
	mod   time.Time
	inode uint64
}

func stampOf(st fs.FileInfo) stamp {
	return stamp{size: st.Size(), mod: st.ModTime(), inode: inodeOf(st)}
}

// isEntry reports whether name is one of wazero's entries (not a sum and
// not a temporary file of a write under way).
func isEntry(name string) bool {
	return !strings.HasSuffix(name, sumSuffix) && !strings.HasSuffix(name, ".tmp")
}

// before checks the cache ahead of a compilation.
func (g *codeGuard) before() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.known == nil {
		g.known = map[string]stamp{}
	}
	g.walk(func(path string, st fs.FileInfo) {
		s := stampOf(st)
		if k, ok := g.known[path]; ok && k == s {
			return
		}
		want, err := os.ReadFile(path + sumSuffix)
		if err != nil {
			if g.inflight > 0 {
				// Perhaps written just now by a compilation still under
				// way, which seals it when it ends.
				return
			}
			g.remove(path, "no hash beside it")
			return
		}
		got, err := fileSum(path)
		if err != nil {
			return
		}
		if !bytes.Equal(bytes.TrimSpace(want), []byte(got)) {
			g.remove(path, "its SHA-256 does not match the one written when it was stored")
			return
		}
		g.known[path] = s
	})
	g.inflight++
}

// after seals the entries a compilation added.
func (g *codeGuard) after() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	g.walk(func(path string, st fs.FileInfo) {
		if _, ok := g.known[path]; ok {
			return
		}
		if _, err := os.Stat(path + sumSuffix); err == nil {
			return // checked by the next before
		}
		sum, err := fileSum(path)
		if err != nil {
			return
		}
		tmp := path + sumSuffix + ".tmp"
		if os.WriteFile(tmp, []byte(sum+"\n"), 0o600) != nil || os.Rename(tmp, path+sumSuffix) != nil {
			_ = os.Remove(tmp)
			return
		}
		g.known[path] = stampOf(st)
	})
}

// walk calls f for every entry of the cache, and removes sums whose entry
// is gone (pruned).
func (g *codeGuard) walk(f func(path string, st fs.FileInfo)) {
	_ = filepath.WalkDir(g.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		name := d.Name()
		if strings.HasSuffix(name, sumSuffix) {
			if _, err := os.Lstat(strings.TrimSuffix(path, sumSuffix)); errors.Is(err, fs.ErrNotExist) {
				_ = os.Remove(path)
			}
			return nil
		}
		if !isEntry(name) || !d.Type().IsRegular() {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return nil
		}
		f(path, st)
		return nil
	})
}

func (g *codeGuard) remove(path, why string) {
	_ = os.Remove(path)
	_ = os.Remove(path + sumSuffix)
	delete(g.known, path)
	g.warn.damaged("compiled code", path, why)
}

// fileSum is the hex SHA-256 of a file.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
