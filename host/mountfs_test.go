package host

import (
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

func TestMountFSKeepsLinksOutOfReach(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "sub", "file"), []byte("f"), 0o644))
	must(os.Symlink(outside, filepath.Join(dir, "out")))
	must(os.Symlink("sub", filepath.Join(dir, "in")))

	fsys, err := newMountFS(Mount{HostPath: dir, GuestPath: "/m"})
	if err != nil {
		t.Fatal(err)
	}
	open := func(p string, flag experimentalsys.Oflag) experimentalsys.Errno {
		f, e := fsys.OpenFile(p, flag, 0o644)
		if e == 0 {
			f.Close()
		}
		return e
	}
	cases := []struct {
		name string
		got  experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"open a file", open("sub/file", experimentalsys.O_RDONLY), 0},
		{"open the root", open(".", experimentalsys.O_RDONLY), 0},
		{"open through a link out", open("out/secret", experimentalsys.O_RDONLY), experimentalsys.EPERM},
		{"open through a link in", open("in/file", experimentalsys.O_RDONLY), experimentalsys.EPERM},
		{"open a link", open("out", experimentalsys.O_RDONLY), experimentalsys.EPERM},
		{"create a file", open("sub/new", experimentalsys.O_RDWR|experimentalsys.O_CREAT), 0},
		{"create through a link", open("out/new", experimentalsys.O_RDWR|experimentalsys.O_CREAT), experimentalsys.EPERM},
		{"dotdot", open("sub/../../x", experimentalsys.O_RDONLY), experimentalsys.EPERM},
		{"symlink", fsys.Symlink("sub", "made"), experimentalsys.EPERM},
		{"rename a link", fsys.Rename("out", "sub/out"), experimentalsys.EPERM},
		{"hard-link a link", fsys.Link("out", "again"), experimentalsys.EPERM},
		{"chmod through a link", fsys.Chmod("out/secret", 0o600), experimentalsys.EPERM},
		{"mkdir through a link", fsys.Mkdir("out/d", 0o755), experimentalsys.EPERM},
		{"unlink through a link", fsys.Unlink("out/secret"), experimentalsys.EPERM},
		{"utimens through a link", fsys.Utimens("out/secret", 0, 0), experimentalsys.EPERM},
		{"mkdir", fsys.Mkdir("sub/d", 0o755), 0},
		{"rename a file", fsys.Rename("sub/new", "sub/d/new"), 0},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: errno %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, e := fsys.Stat("out"); e != experimentalsys.EPERM {
		t.Errorf("stat a link: %v, want EPERM", e)
	}
	if st, e := fsys.Lstat("out"); e != 0 || st.Mode&os.ModeSymlink == 0 {
		t.Errorf("lstat a link: %v %v, want the link itself", st.Mode, e)
	}
	if target, e := fsys.Readlink("out"); e != 0 || target != outside {
		t.Errorf("readlink: %q %v", target, e)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("a file was created outside the mount")
	}

	ro, err := newMountFS(Mount{HostPath: dir, GuestPath: "/m", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, e := ro.OpenFile("sub/file", experimentalsys.O_RDONLY, 0); e != 0 {
		t.Errorf("read-only mount: open for reading: %v", e)
	}
	if _, e := ro.OpenFile("sub/other", experimentalsys.O_RDWR|experimentalsys.O_CREAT, 0o644); e == 0 {
		t.Error("read-only mount: created a file")
	}
	if _, e := ro.OpenFile("out/secret", experimentalsys.O_RDONLY, 0); e != experimentalsys.EPERM {
		t.Errorf("read-only mount: open through a link out: %v, want EPERM", e)
	}
}
