package pulled_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/wasmcp/wasmcp/internal/oci"
	"github.com/wasmcp/wasmcp/internal/pulled"
)

// TestLockRefuses: tool names differing only in case (one file on a
// case-insensitive filesystem), and an entry whose reference pins one
// digest while its digest field says another, are refused when the lock
// is read, saying which.
func TestLockRefuses(t *testing.T) {
	a, b := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	cases := []struct{ name, lock, want string }{
		{"case", fmt.Sprintf("[[tool]]\nname = \"Echo\"\nreference = \"r.example/t/echo:1\"\ndigest = %q\nsigned = false\n[[tool]]\nname = \"echo\"\nreference = \"r.example/t/echo:2\"\ndigest = %q\nsigned = false\n", a, b),
			`tools "Echo" and "echo" differ only in case`},
		{"two_digests", fmt.Sprintf("[[tool]]\nname = \"echo\"\nreference = \"r.example/t/echo@%s\"\ndigest = %q\nsigned = false\n", a, b),
			"reference r.example/t/echo@" + a + " pins " + a + " but digest is " + b},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, pulled.LockName), []byte(c.lock), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := pulled.ReadLock(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestHandPlacedModule: a module placed by hand in the tools directory
// under a pulled tool's name is neither overwritten nor removed; the
// pulled tool is refused with a log line naming both. Once the file is
// gone the pulled tool installs, and a later run owns its file.
func TestHandPlacedModule(t *testing.T) {
	f := newFake(t, []ocispec.Descriptor{wasmLayer(oci.MediaTypeWasm, module, int64(len(module)))}, map[digest.Digest][]byte{digest.FromBytes(module): module})
	dir := t.TempDir()
	lock := fmt.Sprintf("[[tool]]\nname = \"echo\"\nreference = %q\ndigest = %q\nsigned = false\napproved = []\n", f.ref(), digest.FromBytes(f.manifest))
	if err := os.WriteFile(filepath.Join(dir, pulled.LockName), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	hand := []byte("\x00asm\x01\x00\x00\x00 placed by hand")
	wasm := filepath.Join(dir, "echo.wasm")
	if err := os.WriteFile(wasm, hand, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := oci.New(oci.Options{DockerConfig: emptyConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := pulled.OpenCache(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	syncer := func() *pulled.Syncer {
		return &pulled.Syncer{Dir: dir, Cache: cache, Source: c, Verify: pulled.Verify, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	}
	s := syncer()
	if _, err := s.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wasm); !bytes.Equal(b, hand) {
		t.Fatalf("the module placed by hand was replaced: %q", b)
	}
	if !strings.Contains(logs.String(), "not installed over a module placed by hand") || !strings.Contains(logs.String(), wasm) || !strings.Contains(logs.String(), "tool=echo") {
		t.Fatalf("log:\n%s", logs.String())
	}
	// The lock now pins a digest the registry lacks: refused, and the
	// file placed by hand is not removed either.
	bad := strings.Replace(lock, digest.FromBytes(f.manifest).String(), "sha256:"+strings.Repeat("0", 64), 1)
	os.WriteFile(filepath.Join(dir, pulled.LockName), []byte(bad), 0o644)
	if _, err := syncer().Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wasm); !bytes.Equal(b, hand) {
		t.Fatal("the module placed by hand was removed by a refusal")
	}
	// Gone: the pulled tool installs; a new run (an older version on disk,
	// the marker there) still owns it.
	os.WriteFile(filepath.Join(dir, pulled.LockName), []byte(lock), 0o644)
	os.Remove(wasm)
	if _, err := syncer().Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wasm); !bytes.Equal(b, module) {
		t.Fatalf("not installed: %q", b)
	}
	os.WriteFile(wasm, []byte("an older pulled version"), 0o644)
	if _, err := syncer().Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wasm); !bytes.Equal(b, module) {
		t.Fatalf("a file installed from the lock by a run before was not replaced: %q", b)
	}
}
