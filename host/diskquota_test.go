package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ops runs the writer's ops tool with steps and returns its report.
func ops(t *testing.T, m *Module, steps ...fsStep) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"ops": steps})
	got, err := callTool(t, m, nil, "ops", string(b))
	if err != nil {
		t.Fatalf("ops: %v", err)
	}
	return got
}

// fsStep is a step of the writer's ops tool.
type fsStep struct {
	Op   string `json:"op"`
	Path string `json:"path,omitempty"`
	To   string `json:"to,omitempty"`
	H    int    `json:"h,omitempty"`
	Off  int64  `json:"off,omitempty"`
	N    int    `json:"n,omitempty"`
}

// walked is what a fresh count of dir finds.
func walked(dir string) int64 {
	u := &diskUsage{root: dir, runs: map[uint64]struct{}{}, detached: map[uint64]struct{}{}}
	u.count()
	return u.used.Load()
}

// checkCount fails unless the module's first mount's count is what the
// tree holds (it may only err upwards, and these steps leave no drift).
func checkCount(t *testing.T, m *Module, dir, when string) int64 {
	t.Helper()
	got, want := m.mounts[0].usage.used.Load(), walked(dir)
	if got != want {
		t.Fatalf("%s: the quota counts %d bytes, the tree holds %d", when, got, want)
	}
	return got
}

const noSpace = "No space left on device"

// TestDiskQuotaAcrossCalls: calls that each write within their budget and
// keep what they wrote stop at the mount's quota (12 calls of a 64 MiB
// budget once left 769 MB); the writes past it fail with ENOSPC and a
// guest that dies of it gets an error naming max_disk_bytes.
func TestDiskQuotaAcrossCalls(t *testing.T) {
	dir := t.TempDir()
	m := loadWriter(t, Mount{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 1 << 20, MaxDiskBytes: 4 << 20})
	full := 0
	for i := 0; i < 12; i++ {
		got, err := callTool(t, m, nil, "write", fmt.Sprintf(`{"path":"/data/f%d","n":1048576,"chunk":65536}`, i))
		if err != nil {
			t.Fatal(err)
		}
		if got != "wrote 1048576" {
			if !strings.Contains(got, noSpace) {
				t.Fatalf("call %d: %q, want ENOSPC", i, got)
			}
			full++
		}
	}
	if full < 8 {
		t.Fatalf("%d of 12 calls of 1 MiB met a 4 MiB quota", full)
	}
	if used := checkCount(t, m, dir, "after 12 calls"); used > 4<<20 {
		t.Fatalf("the mount holds %d bytes against a 4 MiB quota", used)
	}
	_, err := callTool(t, m, nil, "write", `{"path":"/data/g","n":65536,"fail":true}`)
	if err == nil || !IsKind(err, KindLimit) || !strings.Contains(err.Error(), "quota of 4MiB (mount max_disk_bytes") {
		t.Fatalf("a guest failing on the quota: %v", err)
	}
	// Removing files gives their room back.
	for i := 0; i < 12; i++ {
		os.Remove(filepath.Join(dir, fmt.Sprintf("f%d", i)))
	}
	ops(t, m, fsStep{Op: "remove", Path: "/data/g"})
	m2 := loadWriter(t, Mount{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 1 << 20, MaxDiskBytes: 4 << 20})
	if got, err := callTool(t, m2, nil, "write", `{"path":"/data/f0","n":1048576}`); err != nil || got != "wrote 1048576" {
		t.Fatalf("after the files went and a reload: %q, %v", got, err)
	}
}

// TestDiskQuotaSparseAndTruncate: a file counts its apparent size, so a
// 1-byte write at 1 TiB, or a truncate that grows a file past the quota,
// fails whatever the bytes written; shrinking a file gives room back.
func TestDiskQuotaSparseAndTruncate(t *testing.T) {
	dir := t.TempDir()
	m := loadWriter(t, Mount{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 8 << 20, MaxDiskBytes: 4 << 20})
	got := ops(t, m, fsStep{Op: "open", Path: "/data/s"}, fsStep{Op: "pwrite", Off: 1 << 40, N: 1},
		fsStep{Op: "truncate", Off: 6 << 20}, fsStep{Op: "truncate", Off: 3 << 20})
	if want := "open: ok\npwrite: ENOSPC"; !strings.HasPrefix(got, want) || !strings.Contains(got, "truncate: ENOSPC") || !strings.HasSuffix(got, "truncate: ok\n") {
		t.Fatalf("sparse write and truncates: %q", got)
	}
	if st, _ := os.Stat(filepath.Join(dir, "s")); st.Size() != 3<<20 {
		t.Fatalf("the file is %d bytes", st.Size())
	}
	checkCount(t, m, dir, "after the first call")
	// Another call: 3 MiB kept, 2 more do not fit; shrinking the first
	// file makes room.
	got = ops(t, m, fsStep{Op: "open", Path: "/data/t"}, fsStep{Op: "truncate", Off: 2 << 20},
		fsStep{Op: "open", Path: "/data/s", H: 1}, fsStep{Op: "truncate", H: 1},
		fsStep{Op: "truncate", Off: 2 << 20})
	if got != "open: ok\ntruncate: ENOSPC\nopen: ok\ntruncate: ok\ntruncate: ok\n" {
		t.Fatalf("truncate-extend across calls: %q", got)
	}
	checkCount(t, m, dir, "after the second call")
}

// TestDiskQuotaNamesAndLinks: a file's bytes are freed only with its
// last name (a hard link keeps them), a rename over a file frees the
// file it replaced, a removed file still open keeps its bytes counted
// until its run ends, and nothing is renamed or linked out of a mount.
func TestDiskQuotaNamesAndLinks(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	m := loadWriter(t, Mount{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 8 << 20, MaxDiskBytes: 4 << 20},
		Mount{HostPath: other, GuestPath: "/other"})
	// Hard link, then remove the first name: the bytes stay counted.
	got := ops(t, m, fsStep{Op: "open", Path: "/data/a"}, fsStep{Op: "write", N: 3 << 20}, fsStep{Op: "close"},
		fsStep{Op: "link", Path: "/data/a", To: "/data/b"}, fsStep{Op: "remove", Path: "/data/a"},
		fsStep{Op: "open", Path: "/data/c"}, fsStep{Op: "write", N: 2 << 20})
	if !strings.HasSuffix(got, "write: ENOSPC\n") {
		t.Fatalf("a hard link's bytes: %q", got)
	}
	checkCount(t, m, dir, "after the link")
	// Out of the mount: a rename or link to another mount fails.
	got = ops(t, m, fsStep{Op: "rename", Path: "/data/b", To: "/other/b"}, fsStep{Op: "link", Path: "/data/b", To: "/other/b"})
	if strings.Contains(got, ": ok") {
		t.Fatalf("renamed or linked out of the mount: %q", got)
	}
	// A rename over b frees b's bytes, once the run that may hold it
	// open has ended.
	if got = ops(t, m, fsStep{Op: "rename", Path: "/data/c", To: "/data/b"}); got != "rename: ok\n" {
		t.Fatal(got)
	}
	got = ops(t, m, fsStep{Op: "open", Path: "/data/d"}, fsStep{Op: "write", N: 3 << 20})
	if got != "open: ok\nwrite: ok\n" {
		t.Fatalf("after a rename over a file: %q", got)
	}
	checkCount(t, m, dir, "after the rename")
	// Removed while open: its bytes stay counted while the run may
	// write it, and are freed when the run ends.
	got = ops(t, m, fsStep{Op: "open", Path: "/data/d"}, fsStep{Op: "remove", Path: "/data/d"},
		fsStep{Op: "truncate"}, fsStep{Op: "open", Path: "/data/e", H: 1}, fsStep{Op: "write", H: 1, N: 2 << 20})
	if got != "open: ok\nremove: ok\ntruncate: ok\nopen: ok\nwrite: ENOSPC\n" {
		t.Fatalf("a file removed while open: %q", got)
	}
	checkCount(t, m, dir, "after the run that removed an open file")
	if got := ops(t, m, fsStep{Op: "open", Path: "/data/e"}, fsStep{Op: "write", N: 3 << 20}); got != "open: ok\nwrite: ok\n" {
		t.Fatalf("after that run: %q", got)
	}
}

// TestDiskQuotaSharedAndNested: two modules mounting one directory share
// its count; read-write mounts of one module whose directories nest are
// refused at load (a rename between them would leave the outer quota
// blind).
func TestDiskQuotaSharedAndNested(t *testing.T) {
	dir := t.TempDir()
	mnt := Mount{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 8 << 20, MaxDiskBytes: 4 << 20}
	wasm, err := writerWasm()
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, Limits{})
	a, err := e.Load(context.Background(), "a", wasm, Policy{Mounts: []Mount{mnt}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Load(context.Background(), "b", wasm, Policy{Mounts: []Mount{mnt}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ops(t, a, fsStep{Op: "open", Path: "/data/a"}, fsStep{Op: "write", N: 3 << 20}); got != "open: ok\nwrite: ok\n" {
		t.Fatal(got)
	}
	if got := ops(t, b, fsStep{Op: "open", Path: "/data/b"}, fsStep{Op: "write", N: 3 << 20}); got != "open: ok\nwrite: ENOSPC\n" {
		t.Fatalf("the second module's write: %q", got)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	_, err = e.Load(context.Background(), "c", wasm, Policy{Mounts: []Mount{mnt,
		{HostPath: filepath.Join(dir, "sub"), GuestPath: "/sub", ReadOnly: true}}})
	if err != nil {
		t.Fatalf("a read-only mount inside a read-write one: %v", err)
	}
	_, err = e.Load(context.Background(), "d", wasm, Policy{Mounts: []Mount{mnt,
		{HostPath: filepath.Join(dir, "sub"), GuestPath: "/sub"}}})
	if err == nil || !strings.Contains(err.Error(), "read-write mounts /data and /sub nest") {
		t.Fatalf("nested read-write mounts: %v", err)
	}
}
