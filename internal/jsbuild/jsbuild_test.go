package jsbuild

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// embeddedOrSkip returns the embedded guests and their recorded source
// hash, skipping when nothing is embedded (a clean clone before go
// generate) outside CI; under CI, which generates first, that fails.
func embeddedOrSkip(t *testing.T) (map[string][]byte, string) {
	t.Helper()
	out := map[string][]byte{}
	var sum string
	for _, g := range guests {
		wasm, h, ok, err := Embedded(g.name)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if os.Getenv("CI") != "" {
				t.Fatalf("nothing embedded under CI: .ci/test runs go generate ./internal/jsbuild first")
			}
			t.Skip("nothing embedded: run go generate ./internal/jsbuild")
		}
		out[g.name], sum = wasm, h
	}
	return out, sum
}

// TestEmbeddedMatchesSource: the embedded guests were built from the
// sources of this checkout; a change to the runner, the
// Go SDK or abi without go generate fails here.
func TestEmbeddedMatchesSource(t *testing.T) {
	_, sum := embeddedOrSkip(t)
	want, err := SourceHash("../..")
	if err != nil {
		t.Fatal(err)
	}
	if sum != want {
		t.Fatalf("the embedded guests were built from other sources (hash %s, checkout %s): run go generate ./internal/jsbuild", sum, want)
	}
}

// TestEmbeddedIsReproducible rebuilds the guests from the checkout and
// compares them byte for byte with what is embedded: the build is
// reproducible (same sources and Go toolchain, -trimpath, no VCS stamp),
// so the embedded bytes are what the sources say and no opaque blob.
func TestEmbeddedIsReproducible(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	emb, _ := embeddedOrSkip(t)
	dir := t.TempDir()
	for _, g := range guests {
		out := filepath.Join(dir, g.name+".wasm")
		if err := build(context.Background(), "../..", g, out); err != nil {
			t.Fatal(err)
		}
		fresh, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, emb[g.name]) {
			t.Errorf("%s: a fresh build (%d bytes) differs from the embedded module (%d bytes): run go generate ./internal/jsbuild", g.dir, len(fresh), len(emb[g.name]))
		}
	}
}

// TestSourceHashCoversTheSources: editing a source file changes the hash;
// a test file does not.
func TestSourceHashCoversTheSources(t *testing.T) {
	root := t.TempDir()
	for _, d := range sourceDirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("guest-sdk/js/runner/prelude.js", "a")
	h1, err := SourceHash(root)
	if err != nil {
		t.Fatal(err)
	}
	write("guest-sdk/js/runner/x_test.go", "package main")
	if h2, _ := SourceHash(root); h2 != h1 {
		t.Error("a test file changed the source hash")
	}
	write("guest-sdk/js/runner/prelude.js", "b")
	if h3, _ := SourceHash(root); h3 == h1 {
		t.Error("an edited source left the source hash as it was")
	}
}

// TestBuildOnFirstUse: with nothing embedded, a guest is built from the
// checkout into the user cache directory once, then read from there.
func TestBuildOnFirstUse(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	if testing.Short() {
		t.Skip("builds the runner")
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	wasm, err := buildOnFirstUse(runnerGuest)
	if err != nil {
		t.Fatal(err)
	}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		t.Fatalf("built %d bytes, not a module", len(wasm))
	}
	sum, _ := SourceHash("../..")
	p := filepath.Join(cache, "wasmcp", "js", sum, "runner.wasm")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("not cached where it should be: %v", err)
	}
	// Read from the cache the second time: a marker written over it is
	// what comes back.
	if err := os.WriteFile(p, []byte("\x00asm-cached"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := buildOnFirstUse(runnerGuest)
	if err != nil || string(again) != "\x00asm-cached" {
		t.Fatalf("second use rebuilt instead of reading the cache: %q %v", again[:min(len(again), 12)], err)
	}
}

// TestNoSourceNoEmbedIsAClearError: outside a checkout, with nothing
// embedded, the error says how to get the guests.
func TestNoSourceNoEmbedIsAClearError(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := buildOnFirstUse(runnerGuest)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("go generate ./internal/jsbuild")) {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkEmbedded is what the embedded guests cost at start-up: reading
// and decompressing them (once per process; the first script tool loaded
// pays it). docs/design/scripts.md gives the figure.
func BenchmarkEmbedded(b *testing.B) {
	if _, _, ok, _ := Embedded(runnerGuest.name); !ok {
		b.Skip("nothing embedded: run go generate ./internal/jsbuild")
	}
	for b.Loop() {
		for _, g := range guests {
			if _, _, _, err := Embedded(g.name); err != nil {
				b.Fatal(err)
			}
		}
	}
}
