package skills

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestServedFileSwappedForFIFO (outside review): a skill file replaced,
// after it was loaded, by a FIFO nobody writes (or a link to one) is
// refused when served, at once. Before, the open blocked for ever: every
// resources/read of it held a goroutine and an OS thread, so a client
// repeating it could exhaust the server's threads.
func TestServedFileSwappedForFIFO(t *testing.T) {
	dir := skillTree(t, map[string]string{"one/SKILL.md": skillManifest("one"), "one/notes.md": "notes"})
	loaded, _, err := LoadDir(dir)
	if err != nil || len(loaded) != 1 {
		t.Fatalf("%v %v", loaded, err)
	}
	var f *File
	for _, x := range loaded[0].Files {
		if x.Path == "notes.md" {
			f = x
		}
	}
	if f == nil {
		t.Fatal("no notes.md")
	}
	p := filepath.Join(dir, "one", "notes.md")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.Contents()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was served")
		}
	case <-time.After(5 * time.Second):
		// Unblock the reader so the test binary can end.
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("serving a skill file swapped for a FIFO still waits after 5 s")
	}
}
