package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.toml")
	if err := os.WriteFile(p, []byte("memory = \"64MiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Read(p, 64)
	if err != nil || string(b) != "memory = \"64MiB\"\n" {
		t.Fatalf("Read = %q, %v", b, err)
	}
	// Exactly at the cap is read; one byte over is refused.
	if _, err := Read(p, int64(len(b))); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	if _, err := Read(p, int64(len(b))-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the cap: %v, want ErrTooLarge", err)
	}
	// A link to a regular file is followed.
	l := filepath.Join(dir, "link.toml")
	if err := os.Symlink(p, l); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(l, 64); err != nil || len(b) == 0 {
		t.Fatalf("through a link: %q, %v", b, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := ReadIn(root, "a.toml", 64); err != nil || len(b) == 0 {
		t.Fatalf("ReadIn: %q, %v", b, err)
	}
}

// within fails the test when f does not return within a few seconds (a
// read that blocks for ever).
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("still reading after 10s")
		return nil
	}
}

func TestReadRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.policy.toml")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := within(t, func() error { _, err := Read(p, 1<<20); return err }); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("FIFO: %v, want ErrNotRegular", err)
	}
}

func TestReadRefusesDevice(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	l := filepath.Join(t.TempDir(), "x.policy.toml")
	if err := os.Symlink("/dev/zero", l); err != nil {
		t.Fatal(err)
	}
	if err := within(t, func() error { _, err := Read(l, 1<<20); return err }); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("/dev/zero: %v, want ErrNotRegular", err)
	}
	if _, err := Read(t.TempDir(), 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("directory: %v, want ErrNotRegular", err)
	}
}

func TestReadRefusesSparseBeforeReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.js")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil { // 2 GiB, sparse: no block written
		t.Fatal(err)
	}
	f.Close()
	if _, err := Read(p, 4<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("sparse 2 GiB: %v, want ErrTooLarge", err)
	}
}

// A file that says it is small but grows while read is cut at cap+1.
func TestReadAllStopsAtCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grow.js")
	if err := os.WriteFile(p, []byte("ab"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, info, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(p, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAll(f, info, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("grown: %v, want ErrTooLarge", err)
	}
}
