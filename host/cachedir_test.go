package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCacheDirIsPrivate: a cache directory others may write to is refused
// (it could feed the server native code), a planted file is removed, and
// the cache is pruned, oldest first, to its bound.
func TestCacheDirIsPrivate(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(shared, 0o777)
	if _, err := NewEngine(Config{CacheDir: shared, Logger: quietLogger}); err == nil || !strings.Contains(err.Error(), "writable by its group or by others") {
		t.Fatalf("world-writable cache directory: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(filepath.Join(dir, "wazero", "old"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "wazero", "old", "entry")
	planted := filepath.Join(dir, "wazero", "old", "planted")
	_ = os.WriteFile(old, make([]byte, 4096), 0o600)
	_ = os.WriteFile(planted, []byte("x"), 0o666)
	_ = os.Chmod(planted, 0o666)
	at := time.Now().Add(-time.Hour)
	_ = os.Chtimes(old, at, at)
	// Other tools' files beside the engine's are left alone.
	other := filepath.Join(dir, "conformance", "big")
	_ = os.MkdirAll(filepath.Dir(other), 0o755)
	_ = os.WriteFile(other, make([]byte, 8192), 0o644)
	_ = os.Chtimes(other, at, at)
	link := filepath.Join(dir, "conformance", "link")
	_ = os.Symlink("big", link)
	e, err := NewEngine(Config{CacheDir: dir, CacheMaxBytes: 1024, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(t.Context())
	for _, p := range []string{old, planted} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s survived", p)
		}
	}
	for _, p := range []string{other, link} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("another tool's %s was removed", p)
		}
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	if d := DefaultCacheDir(); d == filepath.Join(os.TempDir(), "wasmcp") {
		t.Fatalf("without HOME the default cache is the shared %s", d)
	}
}
