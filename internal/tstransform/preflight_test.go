package tstransform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBundlePreflight: what esbuild's resolver reads by itself (a
// package's package.json) is checked before it reads it.
func TestBundlePreflight(t *testing.T) {
	t.Run("fifo", bundleFIFOPackageJSON)
	t.Run("dev zero", bundleDevZeroPackageJSON)
	t.Run("outside", bundleOutsidePackageJSON)
}

// bundleFIFOPackageJSON: a package.json that is a FIFO is refused
// fast with a clear error, never a child blocked until the wall ceiling.
func bundleFIFOPackageJSON(t *testing.T) {
	tools, _ := bundleDirs(t, map[string]string{"node_modules/f/index.js": `export const s = 1;`})
	if err := syscall.Mkfifo(filepath.Join(tools, "node_modules", "f", "package.json"), 0o644); err != nil {
		t.Skip(err)
	}
	defer SetWallCeilingForTest(20 * time.Second)()
	start := time.Now()
	_, err := bundleOf(t, tools, "import { s } from \"f\";\nconsole.log(s);\n", 1<<20)
	var refused *Error
	if !errors.As(err, &refused) {
		t.Fatalf("after %s: %v, want a refusal", time.Since(start), err)
	}
}

// bundleOutsidePackageJSON: a package.json linked to a file outside
// the tools directory is not read: its "main" does not choose the file.
func bundleOutsidePackageJSON(t *testing.T) {
	tools, outer := bundleDirs(t, map[string]string{
		"node_modules/p/a.js": `export const s = "AAA";`,
		"node_modules/p/b.js": `export const s = "BBB";`,
	})
	if err := os.WriteFile(filepath.Join(outer, "evil.json"), []byte(`{"main": "b.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outer, "evil.json"), filepath.Join(tools, "node_modules", "p", "package.json")); err != nil {
		t.Fatal(err)
	}
	b, err := bundleOf(t, tools, "import { s } from \"p\";\nconsole.log(s);\n", 1<<20)
	if err == nil && strings.Contains(string(b.Code), "BBB") {
		t.Fatalf("a file outside the tools directory chose what was bundled:\n%s", b.Code)
	}
}

// bundleDevZeroPackageJSON: a package.json linked to /dev/zero is
// refused with a clear error, without reading it.
func bundleDevZeroPackageJSON(t *testing.T) {
	tools, _ := bundleDirs(t, map[string]string{"node_modules/z/index.js": `export const s = 1;`})
	if err := os.Symlink("/dev/zero", filepath.Join(tools, "node_modules", "z", "package.json")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := bundleOf(t, tools, "import { s } from \"z\";\nconsole.log(s);\n", 1<<20)
	var refused *Error
	if !errors.As(err, &refused) {
		t.Fatalf("after %s: %v, want a refusal", time.Since(start), err)
	}
}
