package pull

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/wasmcp/wasmcp/internal/privdir"
	"github.com/wasmcp/wasmcp/internal/regfile"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// Cache holds pulled blobs by digest (blobs/sha256/<hex>) and the
// signatures found for each manifest (sigs/<hex>.json), in a directory
// private to this user. A blob is written only once it hashed to its
// digest, through a temporary file renamed into place, and checked again
// whenever it is read: a file that no longer matches is removed and
// reported missing. It stays within its bound after every write, not only
// when opened: re-pulls of a tag that keeps moving cannot fill the disk.
type Cache struct {
	dir string
	max int64
}

// OpenCache makes (or checks) the cache directory and bounds it to max
// bytes (oldest files first; max <= 0 leaves it unbounded).
func OpenCache(dir string, max int64) (*Cache, error) {
	if err := privdir.Ensure(dir); err != nil {
		return nil, fmt.Errorf("pulled blob cache %s: %w", dir, err)
	}
	for _, sub := range []string{"blobs/sha256", "sigs"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	if _, _, err := privdir.Prune(dir, max); err != nil {
		return nil, fmt.Errorf("pulled blob cache %s: %w", dir, err)
	}
	return &Cache{dir: dir, max: max}, nil
}

func (c *Cache) blobPath(d digest.Digest) string {
	return filepath.Join(c.dir, "blobs", "sha256", d.Encoded())
}

// Blob returns the cached blob of digest d when it is there and still
// hashes to d; ok is false otherwise.
func (c *Cache) Blob(d digest.Digest) (data []byte, ok bool) {
	if d.Validate() != nil || d.Algorithm() != digest.SHA256 {
		return nil, false
	}
	p := c.blobPath(d)
	data, err := regfile.Read(p, maxModuleBytes)
	if err != nil {
		return nil, false
	}
	if digest.FromBytes(data) != d {
		os.Remove(p)
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // recently used: pruned last
	return data, true
}

// PutBlob stores data under its digest.
func (c *Cache) PutBlob(data []byte) error {
	d := digest.FromBytes(data)
	p := c.blobPath(d)
	if err := writeAtomic(p, data, 0o600); err != nil {
		return err
	}
	c.trim(p)
	return nil
}

// trim removes the oldest files (by modification time) until the cache
// holds at most max bytes, never keep (the file just written, which may
// share its modification time with older ones).
func (c *Cache) trim(keep string) {
	if c.max <= 0 {
		return
	}
	type file struct {
		path string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || hidden(p) {
			return nil
		}
		st, err := d.Info()
		if err != nil || !st.Mode().IsRegular() {
			return nil
		}
		files = append(files, file{p, st.Size(), st.ModTime()})
		total += st.Size()
		return nil
	})
	if total <= c.max {
		return
	}
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) })
	for _, f := range files {
		if total <= c.max {
			return
		}
		if f.path != keep && os.Remove(f.path) == nil {
			total -= f.size
		}
	}
}

func (c *Cache) sigPath(manifest digest.Digest) string {
	return filepath.Join(c.dir, "sigs", manifest.Encoded()+".json")
}

// Signatures returns the signatures cached for a manifest.
func (c *Cache) Signatures(manifest digest.Digest) ([]oci.Signature, bool) {
	if manifest.Validate() != nil {
		return nil, false
	}
	data, err := regfile.Read(c.sigPath(manifest), maxLockBytes)
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return nil, false
	}
	var sigs []oci.Signature
	if json.Unmarshal(data, &sigs) != nil {
		return nil, false
	}
	return sigs, true
}

// PutSignatures stores the signatures of a manifest (verified again on
// every use: the cache is not trusted for them).
func (c *Cache) PutSignatures(manifest digest.Digest, sigs []oci.Signature) error {
	data, err := json.Marshal(sigs)
	if err != nil {
		return err
	}
	p := c.sigPath(manifest)
	if err := writeAtomic(p, data, 0o600); err != nil {
		return err
	}
	c.trim(p)
	return nil
}

// Dir is the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Files lists the cache's files (tests check nothing half-written stays).
func (c *Cache) Files() ([]string, error) {
	var out []string
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(c.dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// hidden reports whether a cache file is a temporary one.
func hidden(name string) bool { return strings.HasPrefix(filepath.Base(name), ".") }
