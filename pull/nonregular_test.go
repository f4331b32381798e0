package pull_test

import (
	"context"

	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/pull"
)

// TestSyncNonRegularInstalledFiles: serve's syncer reads the lock and the
// installed NAME.wasm and NAME.policy.toml of the registry directory; one replaced
// by a FIFO nobody writes (open blocked forever: the tag never followed
// again) or by a link to /dev/zero (read until memory ran out) is opened
// without blocking and refused as not regular, the version reinstalled (a
// policy it has not removed; with the lock unread, nothing served).
func TestSyncNonRegularInstalledFiles(t *testing.T) {
	for _, file := range []string{"echo.wasm", "echo.policy.toml", pull.LockName} {
		for _, kind := range []string{"fifo", "devzero"} {
			t.Run(file+"/"+kind, func(t *testing.T) {
				work := t.TempDir()
				dir := filepath.Join(work, "tools")
				src := newMemSource()
				ctx := context.Background()
				src.publish(t, "v", "1", "", nil)
				if _, err := pull.Pull(ctx, pullReq(t, src, dir, "v", pull.Signer{Unsigned: true})); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(dir, file)
				os.Remove(p)
				var err error
				if kind == "fifo" {
					err = syscall.Mkfifo(p, 0o600)
				} else {
					err = os.Symlink("/dev/zero", p)
				}
				if err != nil {
					t.Skip(err)
				}
				src.publish(t, "v", "2", "", nil)
				cache, err := pull.OpenCache(filepath.Join(work, "cache"), 0)
				if err != nil {
					t.Fatal(err)
				}
				s := &pull.Syncer{Dir: dir, Cache: cache, Source: src, Verify: pull.Verify, Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
				done := make(chan error, 1)
				go func() { _, err := s.Sync(ctx, true); done <- err }()
				select {
				case err := <-done:
					t.Logf("Sync: %v", err)
					fi, err := os.Lstat(p)
					switch {
					case file == "echo.policy.toml" && !os.IsNotExist(err):
						t.Errorf("%s after Sync: %v, want removed (the version has no policy)", file, err)
					case file == "echo.wasm" && (err != nil || !fi.Mode().IsRegular()):
						t.Errorf("%s after Sync: %v, want the version reinstalled", file, err)
					case file == pull.LockName:
						if _, err := os.Lstat(filepath.Join(dir, "echo.wasm")); !os.IsNotExist(err) {
							t.Errorf("the lock not regular: echo.wasm %v, want removed (nothing served until the lock is read)", err)
						}
					}
				case <-time.After(60 * time.Second):
					// Neither a FIFO's open nor a read of /dev/zero ends.
					t.Fatalf("Sync still reading %s (%s) after 60 s", file, kind)
				}
			})
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }
