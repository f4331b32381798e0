package host

import (
	"os"
	"path/filepath"
)

// descCache keeps module descriptions on disk by module hash, beside the
// compilation cache, so a restart neither recompiles nor re-describes.
// Errors are ignored: the cache is an optimisation.
//
// It also keeps a copy of each module opened with Open, in the sibling
// directory "modules", by hash: a module whose code is compiled only on its
// first call, or compiled again after the code budget closed it, is
// compiled from that copy, so a call that started on an old version still
// runs that version after its file was replaced.
//
// Each description is stored sealed (its SHA-256 before it, cacheseal.go):
// a file that does not match, damaged or edited by hand, is a cache miss,
// removed, and the module is described again.
type descCache struct {
	dir  string
	warn *cacheWarner
}

// modulePath is where the copy of a module is kept.
func (c *descCache) modulePath(hash string) string {
	return filepath.Join(filepath.Dir(c.dir), "modules", hash+".wasm")
}

// keepModule stores a copy of wasm unless one is there already.
func (c *descCache) keepModule(hash string, wasm []byte) {
	if c == nil {
		return
	}
	p := c.modulePath(hash)
	if _, err := os.Stat(p); err == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp := p + ".tmp"
	if os.WriteFile(tmp, wasm, 0o644) == nil {
		_ = os.Rename(tmp, p)
	}
}

// hasModule reports whether a copy of the module is kept.
func (c *descCache) hasModule(hash string) bool {
	st, err := os.Stat(c.modulePath(hash))
	return err == nil && st.Mode().IsRegular()
}

// module reads the copy of a module, if there is one.
func (c *descCache) module(hash string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	b, err := os.ReadFile(c.modulePath(hash))
	return b, err == nil
}

// has reports whether the cache holds a description under key.
func (c *descCache) has(key string) bool {
	if c == nil {
		return false
	}
	_, err := os.Stat(filepath.Join(c.dir, key+".json"))
	return err == nil
}

func (c *descCache) get(hash string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	p := filepath.Join(c.dir, hash+".json")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	raw, ok := unseal(b)
	if !ok {
		_ = os.Remove(p)
		c.warn.damaged("descriptions", p, "its SHA-256 does not match the one written when it was stored")
		return nil, false
	}
	return raw, true
}

func (c *descCache) put(hash string, raw []byte) {
	if c == nil {
		return
	}
	if os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	tmp := filepath.Join(c.dir, hash+".tmp")
	if os.WriteFile(tmp, sealed(raw), 0o600) == nil {
		_ = os.Rename(tmp, filepath.Join(c.dir, hash+".json"))
	}
}
