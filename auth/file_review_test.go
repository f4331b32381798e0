package auth

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCredentialsFileReplacedBySymlink (outside review): the API-key file
// replaced by a symbolic link to something that is not a readable
// regular file — a missing path, a directory, a FIFO nobody writes to,
// an endless device — is refused at once (503), never waited on or read
// without end, and a link to a good file is followed. Before, a FIFO
// blocked the first request that looked, and every later one behind its
// lock; /dev/zero was read until memory ran out.
func TestCredentialsFileReplacedBySymlink(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("alice "+hashKey("key-a")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	link := func(target string) {
		tmp := file + ".tmp"
		os.Remove(tmp)
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Millisecond)
	}
	link(good)
	a, err := NewAPIKeys(APIKeysConfig{File: file, Reload: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{filepath.Join(dir, "missing"), dir, fifo, "/dev/zero"} {
		link(target)
		done := make(chan error, 1)
		go func() {
			_, err := a.Authenticate(reqWith("Authorization", "Bearer key-a"))
			done <- err
		}()
		select {
		case err := <-done:
			wantStatus(t, err, 503, "")
		case <-time.After(5 * time.Second):
			t.Fatalf("a key file linked to %s: the request still waits after 5 s", target)
		}
		link(good)
		if _, err := a.Authenticate(reqWith("Authorization", "Bearer key-a")); err != nil {
			t.Fatalf("back to a good file after %s: %v", target, err)
		}
	}
	for _, target := range []string{fifo, "/dev/zero", dir} {
		link(target)
		if _, err := NewAPIKeys(APIKeysConfig{File: file}); err == nil {
			t.Errorf("started with a key file linked to %s", target)
		}
	}
}
