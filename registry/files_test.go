package registry

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// loadDir loads dir once (Registry.Load) and fails the test when the
// load has not returned after 20 s: a read that blocks or runs without
// end. It returns the server and the log.
func loadDir(t *testing.T, dir string) (*protocol.Server, string) {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	engine, err := host.NewEngine(host.Config{CacheDir: cacheDir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.NewServer(protocol.Options{Logger: log})
	reg := New(dir, engine, srv, log)
	done := make(chan error, 1)
	go func() { done <- reg.Load(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the initial load has not returned after 20s; log:\n%s", logs)
	}
	t.Cleanup(func() {
		reg.Close()
		_ = engine.Close(context.Background())
	})
	return srv, logs.String()
}

// A NAME.policy.toml that is a FIFO nobody writes, or a link to an
// endless device, is refused at once with the module beside it; the
// other modules of the directory load (before: the load blocked for ever
// in the FIFO's open, or read /dev/zero until memory ran out).
func TestPolicyFileNotRegularRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(p string) error
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"dev-zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "bad.wasm"), smallV1, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.make(filepath.Join(dir, "bad.policy.toml")); err != nil {
				t.Skip("cannot make one here:", err)
			}
			if err := os.WriteFile(filepath.Join(dir, "good.wasm"), smallV2, 0o644); err != nil {
				t.Fatal(err)
			}
			srv, logs := loadDir(t, dir)
			if !strings.Contains(logs, "bad.wasm") || !strings.Contains(logs, "not a regular file") {
				t.Fatalf("bad.wasm not refused for its policy file; log:\n%s", logs)
			}
			if !strings.Contains(handle(t, srv, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"small_hello","arguments":{}}}`), "small v2") {
				t.Fatalf("good.wasm not served beside it; log:\n%s", logs)
			}
		})
	}
}

// A sparse NAME.js claiming 2 GiB is refused from its size, before a
// byte is read (before: read whole, 2 GiB of memory, then refused by the
// script cap).
func TestSparseScriptRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, logs := loadDir(t, dir)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
		t.Fatalf("loading a sparse 2 GiB script allocated %d MiB", got>>20)
	}
	if !strings.Contains(logs, "big.js") || !strings.Contains(logs, "larger than allowed") {
		t.Fatalf("big.js not refused for its size; log:\n%s", logs)
	}
	if _, err := LoadFile(context.Background(), nil, filepath.Join(dir, "big.js")); err == nil || !strings.Contains(err.Error(), "larger than allowed") {
		t.Fatalf("LoadFile: %v", err)
	}
}
