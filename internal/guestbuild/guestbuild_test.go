package guestbuild

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not available")
	}
}

// isCommandModule reports whether b looks like a wasm module exporting
// _start.
func isCommandModule(b []byte) bool {
	return bytes.HasPrefix(b, []byte("\x00asm\x01\x00\x00\x00")) && bytes.Contains(b, []byte("_start"))
}

func TestFindModuleRoot(t *testing.T) {
	root, err := FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("root %s has no go.mod", root)
	}
	sub, err := moduleRootOf(filepath.Join(root, "internal", "guestbuild"))
	if err != nil || sub != root {
		t.Errorf("moduleRootOf(internal/guestbuild) = %s, %v; want %s", sub, err, root)
	}
}

func TestBuildExample(t *testing.T) {
	needGo(t)
	root, err := FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sub", "textstats.wasm")
	if err := Build(context.Background(), filepath.Join(root, "examples", "wasm", "textstats"), out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !isCommandModule(b) {
		t.Errorf("%s is not a wasm command module", out)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BuildAll in a module of its own: builds main packages, skips bin, build
// and directories without main.go, and reports a broken package.
func TestBuildAll(t *testing.T) {
	needGo(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/guests\n\ngo 1.21\n")
	const prog = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n"
	writeFile(t, filepath.Join(dir, "b", "main.go"), prog)
	writeFile(t, filepath.Join(dir, "a", "main.go"), prog)
	writeFile(t, filepath.Join(dir, "bin", "main.go"), prog)
	writeFile(t, filepath.Join(dir, "build", "main.go"), prog)
	writeFile(t, filepath.Join(dir, "lib", "lib.go"), "package lib\n")
	outDir := filepath.Join(dir, "bin")

	built, err := BuildAll(context.Background(), dir, outDir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(outDir, "a.wasm"), filepath.Join(outDir, "b.wasm")}
	if strings.Join(built, ",") != strings.Join(want, ",") {
		t.Errorf("built %v, want %v", built, want)
	}
	for _, p := range built {
		if b, err := os.ReadFile(p); err != nil || !isCommandModule(b) {
			t.Errorf("%s: %v", p, err)
		}
	}

	writeFile(t, filepath.Join(dir, "c", "main.go"), "package main\n\nfunc main() { undefined() }\n")
	built, err = BuildAll(context.Background(), dir, outDir)
	if err == nil || !strings.Contains(err.Error(), "undefined") || len(built) != 2 {
		t.Errorf("broken package: built %v, err %v", built, err)
	}
}

func TestBuildErrors(t *testing.T) {
	if err := Build(context.Background(), filepath.Join(t.TempDir(), "missing"), "x.wasm"); err == nil {
		t.Error("missing directory: no error")
	}
	if _, err := BuildAll(context.Background(), filepath.Join(t.TempDir(), "missing"), t.TempDir()); err == nil {
		t.Error("missing srcRoot: no error")
	}
}
