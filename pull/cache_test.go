package pull_test

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/wasmcp/wasmcp/pull"
)

// TestCacheStaysBounded: a publisher moving a tag at every --pull-interval
// (each version verified, within the approval, or asking for more and
// recorded as pending) adds its blobs to the cache while serve runs; the
// cache must stay within --cache-max then too, not only at start.
func TestCacheStaysBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oci")
	const max = 10 << 10
	c, err := pull.OpenCache(dir, max)
	if err != nil {
		t.Fatal(err)
	}
	var last []byte
	for i := range 8 { // 8 versions of 4 KiB: 32 KiB written
		last = bytes.Repeat([]byte{byte(i + 1)}, 4<<10)
		if err := c.PutBlob(last); err != nil {
			t.Fatal(err)
		}
		if err := c.PutSignatures(digest.FromBytes(last), nil); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, err := d.Info(); err == nil {
				total += st.Size()
			}
		}
		return nil
	})
	if total > max {
		t.Fatalf("the cache holds %d bytes, over --cache-max %d", total, max)
	}
	if _, ok := c.Blob(digest.FromBytes(last)); !ok {
		t.Fatal("the newest blob was pruned")
	}
}
