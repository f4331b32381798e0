package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/privdir"
	"github.com/wasmcp/wasmcp/internal/regfile"
)

// statIndex remembers, across restarts, the hash of each module file of the
// tools directory together with the file's stat when it was read: at start
// a file whose stat is unchanged is listed from the engine's cache
// (host.Engine.OpenKnown) without reading or hashing its bytes, which for
// hundreds of Go modules is most of a warm start (hundreds of megabytes of
// SHA-256).
//
// The trade-off: an unchanged stat is taken to mean unchanged bytes. The
// stat compared is the size, mode, modification time, device, inode number
// and the inode's change time (ctime). Size and modification time alone
// are not enough: a rewrite in place can keep the size, and any user can
// set a file's modification time back (touch -d). The inode changes on a
// rename over the file; the change time is set by the kernel to the
// current time on every write, rename, chmod and utimes, and no user can
// set it. What remains is a rewrite within one tick of the filesystem's
// timestamp clock (a few milliseconds on ext4, up to 2 s on FAT): so a file
// is recorded only when its change and modification times are older, by
// racyWindow, than the moment it was stat'ed before being read (the "racy"
// rule git uses for its index). Files on a filesystem whose clock runs
// ahead of this host's are then never recorded; one whose clock runs more
// than racyWindow behind, or a root who sets the system clock back, could
// defeat the rule. Where the platform reports no inode or change time the
// index is not used. Whatever the index says, a module always runs the
// bytes it was listed with: its code is compiled from the engine's own
// copy, by hash, whose hash is checked.
//
// The index is an optimisation: any error reading or writing it is logged
// at debug level and the files are read as without it.
type statIndex struct {
	dir  string // the tools directory, absolute
	path string // the index file; "" when the engine keeps no cache on disk
	log  *slog.Logger

	once  sync.Once
	mu    sync.Mutex
	known map[string]indexEntry // read from the file, by file name
	saved map[string]indexEntry // what the file holds now
}

// racyWindow is how much older than its stat a file's timestamps must be
// for the file to be recorded in the index (see statIndex). Tests shorten
// it; nothing else changes it.
var racyWindow = 2 * time.Second

// indexEntry is one file's stat and hash.
type indexEntry struct {
	Size  int64  `json:"size"`
	Mode  uint32 `json:"mode"`
	Mtime int64  `json:"mtime"`
	Ctime int64  `json:"ctime"`
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Hash  string `json:"sha256"`
}

// indexFile is the index file's content.
type indexFile struct {
	Dir   string                `json:"dir"`
	Files map[string]indexEntry `json:"files"`
}

// indexSubdir is the registry's subdirectory of the engine's cache.
const indexSubdir = "tools-index"

// newStatIndex is the index of the tools directory dir kept under the
// engine's cache directory cacheDir; with cacheDir "" it knows nothing and
// keeps nothing.
func newStatIndex(dir, cacheDir string, log *slog.Logger) *statIndex {
	x := &statIndex{dir: dir, log: log, known: map[string]indexEntry{}, saved: map[string]indexEntry{}}
	if abs, err := filepath.Abs(dir); err == nil {
		x.dir = abs
	}
	if cacheDir != "" {
		sum := sha256.Sum256([]byte(x.dir))
		x.path = filepath.Join(cacheDir, indexSubdir, hex.EncodeToString(sum[:16])+".json")
	}
	return x
}

// load reads the index file, once.
func (x *statIndex) load() {
	x.once.Do(func() {
		if x.path == "" {
			return
		}
		// The subdirectory must be private and hold only this user's
		// private files, as the engine's own parts of the cache.
		if err := privdir.Ensure(filepath.Dir(x.path)); err != nil {
			x.log.Debug("tools index not used", "err", err)
			x.path = ""
			return
		}
		if _, _, err := privdir.Prune(filepath.Dir(x.path), 0); err != nil {
			x.log.Debug("tools index not used", "err", err)
			x.path = ""
			return
		}
		b, err := regfile.Read(x.path, maxIndexBytes)
		if err != nil {
			if !os.IsNotExist(err) {
				x.log.Debug("tools index not read", "err", err)
			}
			return
		}
		var f indexFile
		if err := json.Unmarshal(b, &f); err != nil || f.Dir != x.dir {
			x.log.Debug("tools index ignored", "file", x.path, "err", err)
			return
		}
		x.mu.Lock()
		for name, e := range f.Files {
			if len(e.Hash) == sha256.Size*2 {
				x.known[name] = e
			}
		}
		x.saved = maps.Clone(x.known)
		x.mu.Unlock()
	})
}

// lookup returns the hash recorded for file when its stat is the one
// recorded with it.
func (x *statIndex) lookup(file string, st fileStat) (string, bool) {
	x.load()
	if !indexable(st) {
		return "", false
	}
	x.mu.Lock()
	e, ok := x.known[file]
	x.mu.Unlock()
	if !ok || e != entryOf(st, e.Hash) {
		return "", false
	}
	return e.Hash, true
}

// indexable reports whether the platform reported what the index needs.
func indexable(st fileStat) bool { return st.regular && st.ctime != 0 && st.ino != 0 }

func entryOf(st fileStat, hash string) indexEntry {
	return indexEntry{Size: st.size, Mode: uint32(st.mode), Mtime: st.mtime, Ctime: st.ctime, Dev: st.dev, Ino: st.ino, Hash: hash}
}

// settled reports whether a file stat'ed at statAt may be recorded: its
// timestamps are older than statAt by racyWindow.
func settled(st fileStat, statAt time.Time) bool {
	limit := statAt.Add(-racyWindow).UnixNano()
	return st.mtime < limit && st.ctime < limit
}

// save records the loaded modules' files (those settled) and writes the
// index file if that changed what it holds.
func (x *statIndex) save(entries map[string]*entry) {
	x.load()
	if x.path == "" {
		return
	}
	files := make(map[string]indexEntry, len(entries))
	for name, e := range entries {
		if indexable(e.stat) && settled(e.stat, e.statAt) {
			files[name] = entryOf(e.stat, e.wasm)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.known = files
	if maps.Equal(files, x.saved) {
		return
	}
	if err := writeFileAtomic(x.path, indexFile{Dir: x.dir, Files: files}); err != nil {
		x.log.Debug("tools index not written", "file", x.path, "err", err)
		return
	}
	x.saved = files
}

// writeFileAtomic writes v as JSON to a private temporary file beside
// path and renames it over path, so a reader (another server on the same
// directory) sees the old index or the new one, never a part.
func writeFileAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".index-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
