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

// isReactorModule reports whether b is a reactor built with
// -buildmode=c-shared from the SDK's package reactor: it exports
// _initialize, wasmcp_main and wasmcp_snapshot.
func isReactorModule(b []byte) bool {
	return bytes.HasPrefix(b, []byte("\x00asm\x01\x00\x00\x00")) && bytes.Contains(b, []byte("_initialize")) &&
		bytes.Contains(b, []byte("wasmcp_main")) && bytes.Contains(b, []byte("wasmcp_snapshot"))
}

// TestBuildExample builds an example as `go run ./examples/wasm/build`
// does: a reactor, the shape docs/writing-tools.md tells a tool author to
// build, which the host runs from a snapshot.
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
	if !isReactorModule(b) {
		t.Errorf("%s is not a reactor module (exporting _initialize, wasmcp_main and wasmcp_snapshot)", out)
	}
}

// TestIsReactor: a package is a reactor when the files go build picks for
// wasip1/wasm under the given tags import the SDK's package reactor.
func TestIsReactor(t *testing.T) {
	dir := t.TempDir()
	const imp = "import _ \"" + ReactorPackage + "\"\n"
	writeFile(t, filepath.Join(dir, "reactor", "main.go"), "package main\n\n"+imp+"\nfunc main() {}\n")
	writeFile(t, filepath.Join(dir, "command", "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println() }\n")
	writeFile(t, filepath.Join(dir, "both", "main.go"), "package main\n")
	writeFile(t, filepath.Join(dir, "both", "command.go"), "//go:build !reactor\n\npackage main\n\nfunc main() {}\n")
	writeFile(t, filepath.Join(dir, "both", "reactor.go"), "//go:build reactor\n\npackage main\n\n"+imp+"\nfunc main() {}\n")
	writeFile(t, filepath.Join(dir, "native", "main.go"), "package main\n\nfunc main() {}\n")
	writeFile(t, filepath.Join(dir, "native", "wasm.go"), "//go:build !wasip1\n\npackage main\n\n"+imp)
	for _, c := range []struct {
		pkg   string
		flags []string
		want  bool
	}{
		{"reactor", nil, true},
		{"command", nil, false},
		{"both", nil, false},
		{"both", []string{"-tags=reactor"}, true},
		{"both", []string{"-tags", "x,reactor"}, true},
		{"native", nil, false},
	} {
		got, err := IsReactor(filepath.Join(dir, c.pkg), c.flags...)
		if err != nil || got != c.want {
			t.Errorf("IsReactor(%s, %q) = %v, %v; want %v", c.pkg, c.flags, got, err, c.want)
		}
	}
	if _, err := IsReactor(filepath.Join(dir, "missing")); err == nil {
		t.Error("IsReactor of a missing directory: no error")
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
