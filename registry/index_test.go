package registry

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// startOnce loads dir with an engine on cache and returns the answer of
// small_hello and the logs; everything is closed before it returns.
func startOnce(t *testing.T, dir, cache string) (answer, logs string) {
	t.Helper()
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	engine, err := host.NewEngine(host.Config{CacheDir: cache, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close(context.Background())
	srv := protocol.NewServer(protocol.Options{Logger: log})
	reg := New(dir, engine, srv, log)
	defer reg.Close()
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	answer = handle(t, srv, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"small_hello","arguments":{}}}`)
	return answer, buf.String()
}

func TestStatIndexSkipsUnchangedFilesOnly(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0 // the files below are seconds old at most
	dir, cache := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "small.wasm")
	if err := os.WriteFile(path, smallV1, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // a timestamp tick or more before the stat
	const hit = "module listed from the tools index"

	got, logs := startOnce(t, dir, cache)
	if !strings.Contains(got, "hello from small v1") || strings.Contains(logs, hit) {
		t.Fatalf("first start: %s\n%s", got, logs)
	}
	got, logs = startOnce(t, dir, cache)
	if !strings.Contains(got, "hello from small v1") || !strings.Contains(logs, hit) {
		t.Fatalf("restart with the file unchanged: not listed from the index, or wrong answer: %s\n%s", got, logs)
	}

	// Rewritten in place with bytes of the same size and the modification
	// time put back: only the change time tells.
	before, _ := os.Stat(path)
	if len(smallV2) != len(smallV1) {
		t.Fatal("the versions must have the same size")
	}
	if err := os.WriteFile(path, smallV2, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("size or modification time changed")
	}
	if a, b := after.Sys().(*syscall.Stat_t), before.Sys().(*syscall.Stat_t); a.Ino != b.Ino {
		t.Fatal("the inode changed: the test would not test the change time")
	}
	time.Sleep(50 * time.Millisecond)
	got, logs = startOnce(t, dir, cache)
	if !strings.Contains(got, "hello from small v2") || strings.Contains(logs, hit) {
		t.Fatalf("restart after a same-size same-mtime rewrite: %s\n%s", got, logs)
	}
	got, logs = startOnce(t, dir, cache)
	if !strings.Contains(got, "hello from small v2") || !strings.Contains(logs, hit) {
		t.Fatalf("restart after that: %s\n%s", got, logs)
	}

	// Replaced by a rename (a new inode), same size and mtime.
	tmp := filepath.Join(dir, ".small.tmp")
	if err := os.WriteFile(tmp, smallV1, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	got, logs = startOnce(t, dir, cache)
	if !strings.Contains(got, "hello from small v1") || strings.Contains(logs, hit) {
		t.Fatalf("restart after a rename over the file: %s\n%s", got, logs)
	}
}

func TestStatIndexLeavesOutRecentFiles(t *testing.T) {
	cache := t.TempDir()
	x := newStatIndex(t.TempDir(), cache, slog.Default())
	now := time.Now()
	st := fileStat{regular: true, size: 10, ino: 7, dev: 1}
	at := func(mtime, ctime time.Duration) fileStat {
		s := st
		s.mtime, s.ctime = now.Add(-mtime).UnixNano(), now.Add(-ctime).UnixNano()
		return s
	}
	hash := strings.Repeat("ab", 32)
	x.save(map[string]*entry{
		"old.wasm":       {wasm: hash, stat: at(time.Hour, time.Hour), statAt: now},
		"new-ctime.wasm": {wasm: hash, stat: at(time.Hour, time.Second), statAt: now},
		"new-mtime.wasm": {wasm: hash, stat: at(time.Second, time.Hour), statAt: now},
	})
	// A new index on the same directory reads what was saved.
	y := newStatIndex(x.dir, cache, slog.Default())
	if got, ok := y.lookup("old.wasm", at(time.Hour, time.Hour)); !ok || got != hash {
		t.Fatalf("a settled file is not in the index: %q %v", got, ok)
	}
	y.load()
	for _, f := range []string{"new-ctime.wasm", "new-mtime.wasm"} {
		if _, ok := y.known[f]; ok {
			t.Fatalf("%s, changed within racyWindow of its stat, is in the index", f)
		}
	}
	if _, ok := y.lookup("old.wasm", at(time.Hour, time.Hour-time.Nanosecond)); ok {
		t.Fatal("a different change time matched")
	}
}
