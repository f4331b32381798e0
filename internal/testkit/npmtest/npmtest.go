// Package npmtest installs npm packages for tests, once per set of
// packages on a machine: the first test to ask runs `npm install` into a
// temporary directory and renames it into place, later ones (in this test
// binary or another) reuse it. Without npm a test is skipped, except in
// CI (CI set), where that is a failure.
package npmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var mu sync.Mutex

// Modules returns a node_modules directory holding pkgs (name@version,
// pinned), installed once and shared: callers copy it (CopyInto), never
// write into it.
func Modules(t testing.TB, pkgs ...string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
	dir := filepath.Join(os.TempDir(), "wasmcp-npmtest-"+hex.EncodeToString(sum[:8]))
	mods := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "installed")); err == nil {
		return mods
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm is not installed, and CI needs it to install %v", pkgs)
		}
		t.Skipf("npm is not installed: the test needs %v", pkgs)
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "wasmcp-npmtest-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(npm, append([]string{"install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock", "--save-exact"}, pkgs...)...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %v: %v\n%s", pkgs, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, "installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test binary installed it meanwhile.
		if _, statErr := os.Stat(filepath.Join(dir, "installed")); statErr != nil {
			t.Fatalf("installing %v: %v", pkgs, err)
		}
	}
	return mods
}

// CopyInto copies the node_modules directory mods into dir (as
// dir/node_modules).
func CopyInto(t testing.TB, mods, dir string) {
	t.Helper()
	dst := filepath.Join(dir, "node_modules")
	err := filepath.WalkDir(mods, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(mods, p)
		to := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
