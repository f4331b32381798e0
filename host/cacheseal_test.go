package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// sealedProbeCache returns a fresh cache directory holding the probe's
// compiled code, copied from the shared test cache once an engine on it
// sealed that code (so the test does not compile a Go guest again).
func sealedProbeCache(t *testing.T) string {
	t.Helper()
	e := newEngine(t, Limits{})
	loadProbe(t, e, Policy{})
	dir := filepath.Join(t.TempDir(), "cache")
	src := filepath.Join(testCache, "wazero")
	// Other test packages share testCache and may remove an entry while
	// it is copied (an entry not sealed yet when another process looks):
	// what vanished is left out, and the module compiles again.
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dir, "wazero", rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// compiledEntries lists wazero's entries (not their sums) under dir.
func compiledEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(filepath.Join(dir, "wazero"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isEntry(d.Name()) {
			out = append(out, path)
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatal("no compiled code in the cache")
	}
	return out
}

// damageHeader rewrites the header of one of wazero's entries, which
// wazero's own checksum (of the machine code only) does not cover.
func damageHeader(t *testing.T, path string, how string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("WAZEVO")) {
		t.Fatalf("%s is not a wazero cache entry", path)
	}
	at := 6 + 1 + int(b[6]) // magic, version length, version
	n := binary.LittleEndian.Uint32(b[at:])
	switch how {
	case "offsets":
		// Every function starts one byte later: mid-instruction.
		for i := range int(n) {
			p := at + 4 + 8*i
			binary.LittleEndian.PutUint64(b[p:], binary.LittleEndian.Uint64(b[p:])+1)
		}
	case "count":
		binary.LittleEndian.PutUint32(b[at:], 0xFFFFFFF0)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// logBuffer is a logger whose output a test reads.
func logBuffer() (*slog.Logger, func() string) {
	var mu sync.Mutex
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	return l, func() string {
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}
}

// TestDamagedCompiledCodeIsACacheMiss: a compiled-code entry whose header
// was changed (a shifted function-offset table crashed the server at the
// first call; a huge function count exhausted its memory) is found by the
// project's own hash, removed and compiled again, and the call answers.
func TestDamagedCompiledCodeIsACacheMiss(t *testing.T) {
	skipLongInShort(t)
	for _, how := range []string{"offsets", "count"} {
		t.Run(how, func(t *testing.T) {
			dir := sealedProbeCache(t)
			for _, p := range compiledEntries(t, dir) {
				damageHeader(t, p, how)
			}
			logger, logs := logBuffer()
			e, err := NewEngine(Config{CacheDir: dir, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			m := loadProbe(t, e, Policy{})
			if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
				t.Fatalf("after a damaged entry: %q, %v", got, err)
			}
			if out := logs(); strings.Count(out, "cache entry damaged") != 1 {
				t.Fatalf("want the damage logged once; log:\n%s", out)
			}
			for _, p := range compiledEntries(t, dir) {
				sum, err := os.ReadFile(p + sumSuffix)
				got, _ := fileSum(p)
				if err != nil || strings.TrimSpace(string(sum)) != got {
					t.Fatalf("the recompiled %s is not sealed: %q, %v", p, sum, err)
				}
			}
		})
	}
}

// TestUnsealedCompiledCodeIsRemoved: an entry without a hash beside it
// (planted, or left by a writer that stopped) is not handed to wazero.
func TestUnsealedCompiledCodeIsRemoved(t *testing.T) {
	skipLongInShort(t)
	dir := sealedProbeCache(t)
	entries := compiledEntries(t, dir)
	for _, p := range entries {
		if err := os.Remove(p + sumSuffix); err != nil {
			t.Fatal(err)
		}
		damageHeader(t, p, "offsets")
	}
	e, err := NewEngine(Config{CacheDir: dir, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	m := loadProbe(t, e, Policy{})
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
		t.Fatalf("after an unsealed entry: %q, %v", got, err)
	}
}

// TestDescriptionCacheEditedByHand: a description file changed after it
// was stored (here to name a tool the module does not have) is a cache
// miss: the module is described again and lists its own tools.
func TestDescriptionCacheEditedByHand(t *testing.T) {
	skipLongInShort(t)
	dir := sealedProbeCache(t)
	e, err := NewEngine(Config{CacheDir: dir, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	m := loadProbe(t, e, Policy{})
	e.Close(context.Background())
	p := filepath.Join(dir, "describe", m.Hash()+".json")
	b, err := os.ReadFile(p)
	if err != nil || !bytes.Contains(b, []byte(`"count"`)) {
		t.Fatalf("description not cached: %v", err)
	}
	if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte(`"count"`), []byte(`"evil!"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	logger, logs := logBuffer()
	e, err = NewEngine(Config{CacheDir: dir, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	m, err = e.Open(context.Background(), "probe", probeWasm, "", Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range m.Description().Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); strings.Contains(got, "evil!") || !strings.Contains(got, "count") {
		t.Fatalf("tools listed from an edited cache: %s", got)
	}
	if !strings.Contains(logs(), "cache entry damaged") {
		t.Fatalf("the edit was not logged:\n%s", logs())
	}
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
		t.Fatalf("call: %q, %v", got, err)
	}
}

// TestDamagedSnapshotIsRemoved: a snapshot file whose stored hash does not
// match is removed, logged once, and the snapshot taken again.
func TestDamagedSnapshotIsRemoved(t *testing.T) {
	skipLongInShort(t)
	dir := t.TempDir()
	logger, logs := logBuffer()
	open := func() *Module {
		e, err := NewEngine(Config{CacheDir: dir, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		return loadSnapshotProbe(t, e, Policy{})
	}
	open()
	files, _ := filepath.Glob(filepath.Join(dir, "snapshot", "*.wasm"))
	if len(files) != 1 {
		t.Fatalf("snapshot files: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	b[0] ^= 0xFF // the header: the stored hash
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	m := open()
	if got, err := callTool(t, m, nil, "count", "{}"); err != nil || got != "1" {
		t.Fatalf("after a damaged snapshot: %q, %v", got, err)
	}
	if out := logs(); strings.Count(out, "cache entry damaged") != 1 || !strings.Contains(out, "cache=snapshots") {
		t.Fatalf("want the damaged snapshot logged once; log:\n%s", out)
	}
	if c, _ := os.ReadFile(files[0]); bytes.Equal(c, b) {
		t.Fatal("the damaged snapshot was kept")
	}
}
