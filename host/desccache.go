package host

import (
	"os"
	"path/filepath"
)

// descCache keeps module descriptions on disk by module hash, beside the
// compilation cache, so a restart neither recompiles nor re-describes.
// Errors are ignored: the cache is an optimisation.
type descCache struct{ dir string }

func (c *descCache) get(hash string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, hash+".json"))
	return b, err == nil
}

func (c *descCache) put(hash string, raw []byte) {
	if c == nil {
		return
	}
	if os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	tmp := filepath.Join(c.dir, hash+".tmp")
	if os.WriteFile(tmp, raw, 0o600) == nil {
		_ = os.Rename(tmp, filepath.Join(c.dir, hash+".json"))
	}
}
