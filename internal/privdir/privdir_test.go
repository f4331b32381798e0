package privdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckRefusesSharedDirectories(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine")
	if err := Ensure(mine); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(mine); st.Mode().Perm() != 0o700 {
		t.Fatalf("created with mode %v", st.Mode().Perm())
	}
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := Ensure(shared); err == nil || !strings.Contains(err.Error(), "writable by its group or by others") {
		t.Fatalf("world-writable directory: %v", err)
	}
	if os.Geteuid() != 0 {
		// The system's /tmp is owned by root (and sticky, world-writable).
		if err := Check("/"); err == nil || !strings.Contains(err.Error(), "owned by user 0") {
			t.Fatalf("root's directory: %v", err)
		}
	}
	if !strings.HasPrefix(Fallback("wasmcp"), filepath.Join(os.TempDir(), "wasmcp-")) || Fallback("wasmcp") == filepath.Join(os.TempDir(), "wasmcp") {
		t.Fatalf("fallback %s", Fallback("wasmcp"))
	}
}

func TestPruneRemovesForeignThenOldest(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int, age time.Duration, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, _, err := Prune(filepath.Join(dir, "missing"), 1); err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
	oldest := write("v1/a", 100, 3*time.Hour, 0o600)
	middle := write("v2/b", 100, 2*time.Hour, 0o600)
	newest := write("v2/c", 100, time.Hour, 0o600)
	planted := write("v2/d", 10, 0, 0o666)
	freed, removed, err := Prune(dir, 250)
	if err != nil || freed != 100 || removed != 2 {
		t.Fatalf("freed %d, removed %d, %v", freed, removed, err)
	}
	for p, want := range map[string]bool{oldest: false, middle: true, newest: true, planted: false} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s kept %v, want %v", p, err == nil, want)
		}
	}
	if _, removed, _ := Prune(dir, 0); removed != 0 {
		t.Fatalf("an unbounded prune removed %d", removed)
	}
	_ = os.Chmod(dir, 0o777)
	if _, _, err := Prune(dir, 0); err == nil {
		t.Fatal("a world-writable directory was pruned")
	}
}
