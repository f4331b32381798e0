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

// TestCredentialsFileRewrittenInPlace (outside review): a revocation
// written into the same file (same inode), the same size (every key hash
// is as long as the next), with its modification time put back — as
// `cp -p`, `rsync --inplace -t` or `tar x` do, or on a file system whose
// mtime is coarse — still takes effect at the next look. Before, the
// file's stat was unchanged, so it was not read again and the revoked
// key stayed valid.
func TestCredentialsFileRewrittenInPlace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte("alice "+hashKey("key-a")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(file)
	a, err := NewAPIKeys(APIKeysConfig{File: file, Reload: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(reqWith("Authorization", "Bearer key-a")); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt([]byte("alice "+hashKey("key-b")+"\n"), 0); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if err := os.Chtimes(file, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(file); st2.Size() != st.Size() || !st2.ModTime().Equal(st.ModTime()) || !os.SameFile(st, st2) {
		t.Fatal("the rewrite changed the stat; the test does not test")
	}
	time.Sleep(5 * time.Millisecond)
	_, err = a.Authenticate(reqWith("Authorization", "Bearer key-a"))
	wantStatus(t, err, 401, CodeInvalidToken)
	if _, err := a.Authenticate(reqWith("Authorization", "Bearer key-b")); err != nil {
		t.Fatalf("the new key: %v", err)
	}
}
