package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewWritesAScript(t *testing.T) {
	dir := t.TempDir()
	res, err := New(Options{Lang: "ts", Name: "greet", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 {
		t.Fatalf("files: %v", res.Files)
	}
	b, err := os.ReadFile(filepath.Join(dir, "greet.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `server.registerTool("greet"`) || strings.Contains(string(b), "{%") {
		t.Fatalf("greet.ts:\n%s", b)
	}
	if !strings.Contains(res.Next, "wasmcp check "+dir+"/greet.ts") {
		t.Fatalf("next: %s", res.Next)
	}
	// Never overwrites.
	if _, err := New(Options{Lang: "typescript", Name: "greet", Dir: dir}); err == nil {
		t.Fatal("an existing file was overwritten")
	}
}

func TestNewCompiledNeedsACheckout(t *testing.T) {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hello")
	res, err := New(Options{Lang: "go", Name: "hello", Dir: dir, SDK: root})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "guest-sdk/go => "+root+"/guest-sdk/go") {
		t.Fatalf("go.mod does not replace the SDK with the checkout's:\n%s", mod)
	}
	if fi, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Fatalf("build.sh not executable: %v", err)
	}
	if len(res.Files) != 4 {
		t.Fatalf("files: %v", res.Files)
	}
	// A directory with files in it is not a new tool's.
	if _, err := New(Options{Lang: "c", Name: "hello", Dir: dir, SDK: root}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("a non-empty directory: %v", err)
	}
	if _, err := New(Options{Lang: "rust", Name: "x", Dir: t.TempDir(), SDK: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not a wasmcp checkout") {
		t.Fatalf("a directory that is no checkout: %v", err)
	}
}

func TestNewRefusesBadInput(t *testing.T) {
	for _, o := range []Options{
		{Lang: "cobol", Name: "x"},
		{Lang: "ts", Name: "1x"},
		{Lang: "ts", Name: "../escape"},
		{Lang: "ts", Name: "a-b"},
		{Lang: "ts", Name: strings.Repeat("a", 65)},
	} {
		o.Dir = t.TempDir()
		if _, err := New(o); err == nil {
			t.Errorf("%+v was accepted", o)
		}
	}
}
