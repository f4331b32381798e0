package host

import (
	"sync"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// TestDiskQuotaCreateRacesRemove: a run creating a name while another
// removes it cannot make the count drift down (a creation the quota did
// not charge, then a removal that frees it): after racing, the count is
// at least what the tree holds. Bounded: 2 s or 20,000 rounds a side.
func TestDiskQuotaCreateRacesRemove(t *testing.T) {
	dir := t.TempDir()
	mfs, err := newMountFS(Mount{HostPath: dir, GuestPath: "/data"})
	if err != nil {
		t.Fatal(err)
	}
	u := &diskUsage{root: dir, runs: map[uint64]struct{}{}, detached: map[uint64]struct{}{}}
	u.count()
	run := func() *budgetFS {
		return &budgetFS{FS: mfs, b: &writeBudget{limit: 1 << 40, mount: "/data", q: quota{u: u, limit: 1 << 40, run: u.begin()}}}
	}
	for what, create := range map[string]func(f *budgetFS) experimentalsys.Errno{
		"open O_CREAT": func(f *budgetFS) experimentalsys.Errno {
			file, errno := f.OpenFile("x", experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644)
			if errno == 0 {
				_ = file.Close()
			}
			return errno
		},
		"mkdir": func(f *budgetFS) experimentalsys.Errno { return f.Mkdir("x", 0o755) },
	} {
		a, b := run(), run()
		deadline := time.Now().Add(2 * time.Second)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000 && time.Now().Before(deadline); i++ {
				_ = create(a)
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 20000 && time.Now().Before(deadline); i++ {
				_ = b.Unlink("x")
				_ = b.Rmdir("x")
			}
		}()
		wg.Wait()
		_ = a.Unlink("x")
		_ = a.Rmdir("x")
		u.end(a.b.q.run)
		u.end(b.b.q.run)
		if got, want := u.used.Load(), walked(dir); got < want {
			t.Errorf("%s racing a removal: the quota counts %d bytes, the tree holds %d", what, got, want)
		}
		u.count()
	}
}
