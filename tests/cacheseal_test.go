package tests

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTamperedCacheDir: wasmcp started on a cache directory whose compiled
// code has a shifted function-offset table (which wazero's checksum does
// not cover: the server died at the first call) and whose description
// names a tool the module does not have recompiles and re-describes the
// module, lists its own tool and answers the call.
func TestTamperedCacheDir(t *testing.T) {
	t.Parallel()
	tools := t.TempDir()
	b, err := os.ReadFile("testdata/small/small.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "small.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	serve := func() (*served, *stdioClient) {
		s := startServe(t, "--tools", tools, "--cache-dir", cache, "--watch=false")
		return s, newStdioClient(t, s)
	}
	s, c := serve()
	if r := c.request("tools/call", `{"name":"small_hello","arguments":{}}`, nil); !strings.Contains(r, "hello from small v1") {
		t.Fatalf("first run: %s", r)
	}
	s.Stdin.Close()
	done := make(chan error, 1)
	go func() { done <- waitExit(s) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the first server did not stop")
	}

	entries := 0
	_ = filepath.WalkDir(filepath.Join(cache, "wazero"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".sha256") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte("WAZEVO")) {
			return nil
		}
		at := 7 + int(b[6])
		for i := range int(binary.LittleEndian.Uint32(b[at:])) {
			p := at + 4 + 8*i
			binary.LittleEndian.PutUint64(b[p:], binary.LittleEndian.Uint64(b[p:])+1)
		}
		entries++
		return os.WriteFile(path, b, 0o600)
	})
	descs, _ := filepath.Glob(filepath.Join(cache, "describe", "*.json"))
	if entries == 0 || len(descs) == 0 {
		t.Fatalf("nothing cached to damage: %d entries, descriptions %v", entries, descs)
	}
	for _, p := range descs {
		d, _ := os.ReadFile(p)
		_ = os.WriteFile(p, bytes.ReplaceAll(d, []byte("small_hello"), []byte("other_tool")), 0o600)
	}

	s, c = serve()
	list := c.request("tools/list", `{}`, nil)
	if !strings.Contains(list, `"small_hello"`) || strings.Contains(list, "other_tool") {
		t.Fatalf("tools/list from a tampered cache: %s", list)
	}
	if r := c.request("tools/call", `{"name":"small_hello","arguments":{}}`, nil); !strings.Contains(r, "hello from small v1") {
		t.Fatalf("call from a tampered cache: %s\n%s", r, s.Stderr.String())
	}
	if !strings.Contains(s.Stderr.String(), "cache entry damaged") {
		t.Fatalf("the damage was not logged:\n%s", s.Stderr.String())
	}
}
