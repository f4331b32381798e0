package host

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// writerWasm is testdata/guests/writer, built once per test binary.
var writerWasm = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "host-test-writer")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "writer.wasm")
	if err := guestbuild.Build(context.Background(), "testdata/guests/writer", out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
})

func loadWriter(t *testing.T, mounts ...Mount) *Module {
	t.Helper()
	wasm, err := writerWasm()
	if err != nil {
		t.Fatal(err)
	}
	m, err := newEngine(t, Limits{}).Load(context.Background(), "writer", wasm, Policy{Mounts: mounts})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWriteBudget: what one call writes to a read-write mount is bounded
// by the mount's max_write_bytes (a call once wrote 300 MiB, a snapshot
// run 3.6 GB): a write past it fails, growing a file past it fails, a
// guest that dies of it gets an error that says so, and the next call
// has its whole budget again.
func TestWriteBudget(t *testing.T) {
	dir := t.TempDir()
	m := loadWriter(t, Mount{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 1 << 20})
	file := filepath.Join(dir, "out")

	got, err := callTool(t, m, nil, "write", `{"path":"/data/out","n":4194304,"chunk":65536}`)
	if err != nil || !strings.HasPrefix(got, "wrote 1048576 then ") {
		t.Fatalf("4 MiB against a 1 MiB budget: %q, %v", got, err)
	}
	if st, err := os.Stat(file); err != nil || st.Size() != 1<<20 {
		t.Fatalf("the file holds %v bytes (%v), want 1 MiB", st.Size(), err)
	}
	// The next call starts again from zero.
	if got, err := callTool(t, m, nil, "write", `{"path":"/data/out","n":1048576,"chunk":65536}`); err != nil || got != "wrote 1048576" {
		t.Fatalf("a call within the budget: %q, %v", got, err)
	}
	// Growing a file is writing.
	got, err = callTool(t, m, nil, "write", `{"path":"/data/out","n":10,"grow":1073741824}`)
	if err != nil || !strings.Contains(got, "truncate to 1073741824") {
		t.Fatalf("growing a file to 1 GiB: %q, %v", got, err)
	}
	if st, _ := os.Stat(file); st.Size() != 10 {
		t.Fatalf("the file grew to %d", st.Size())
	}
	// A guest that exits on the failed write: its error names the budget.
	_, err = callTool(t, m, nil, "write", `{"path":"/data/out","n":2097152,"fail":true}`)
	if err == nil || !IsKind(err, KindLimit) || !strings.Contains(err.Error(), "its writes to /data reached the limit of 1MiB (mount max_write_bytes)") {
		t.Fatalf("a guest failing on the budget: %v", err)
	}
}

// TestWriteBudgetDefault: a read-write mount without max_write_bytes
// has DefaultMaxWriteBytes per call.
func TestWriteBudgetDefault(t *testing.T) {
	dir := t.TempDir()
	m := loadWriter(t, Mount{HostPath: dir, GuestPath: "/data"})
	got, err := callTool(t, m, nil, "write", `{"path":"/data/big","n":100663296,"chunk":4194304}`)
	if err != nil || !strings.HasPrefix(got, "wrote 67108864 then ") {
		t.Fatalf("96 MiB against the default budget: %q, %v", got, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "big")); err != nil || st.Size() != DefaultMaxWriteBytes {
		t.Fatalf("the file holds %v bytes, want %d", st.Size(), DefaultMaxWriteBytes)
	}
}

// writerReactor is the writer built as a reactor that asks for a snapshot.
var writerReactor = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "host-test-writer-reactor")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "writer.wasm")
	if err := guestbuild.BuildReactor(context.Background(), "testdata/guests/writer", out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
})

// TestWriteBudgetSnapshotRun: the start-up a snapshot is taken of has the
// mount's write budget too; a start-up that spent it is not snapshotted
// (what it kept is not what it meant to keep), and within the budget the
// snapshot is taken.
func TestWriteBudgetSnapshotRun(t *testing.T) {
	wasm, err := writerReactor()
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, Limits{})
	for _, c := range []struct {
		n    int
		used bool
	}{{3 << 20, false}, {1 << 20, true}} {
		dir := t.TempDir()
		p := Policy{Mounts: []Mount{{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 2 << 20}},
			Env: []EnvVar{{Name: "WRITER_STARTUP", Value: strconv.Itoa(c.n)}}}
		m, err := e.Load(context.Background(), "writer", wasm, p)
		if err != nil {
			if c.used || !strings.Contains(err.Error(), "max_write_bytes") {
				t.Fatalf("start-up writing %d bytes: %v", c.n, err)
			}
		} else if used, why := m.Snapshot(); used != c.used || (!used && !strings.Contains(why, "max_write_bytes")) {
			t.Fatalf("start-up writing %d bytes: snapshot %v (%s)", c.n, used, why)
		}
		if st, err := os.Stat(filepath.Join(dir, "startup")); err != nil || st.Size() > 2<<20 {
			t.Fatalf("the start-up wrote %v bytes (%v) against a 2 MiB budget", st.Size(), err)
		}
	}
}

// TestWriteBudgetCountsEntries (outside review): a guest that creates
// empty files, directories or links — no byte written — still fills a
// disk (blocks, inodes). A run may create one entry per 4 KiB of the
// mount's budget: 256 for 1 MiB. Before, every one of 2000 was made.
func TestWriteBudgetCountsEntries(t *testing.T) {
	for _, kind := range []string{"file", "dir", "symlink"} {
		dir := t.TempDir()
		m := loadWriter(t, Mount{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 1 << 20})
		got, err := callTool(t, m, nil, "create", `{"dir":"/data","n":2000,"kind":"`+kind+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) > 256 || !strings.HasPrefix(got, "created ") || got == "created 2000" {
			t.Fatalf("%s: %q, %d entries on disk against a 1 MiB budget", kind, got, len(ents))
		}
	}
	// Opening an existing file to write it again creates nothing.
	dir := t.TempDir()
	m := loadWriter(t, Mount{HostPath: dir, GuestPath: "/data", MaxWriteBytes: 64 << 10})
	for i := 0; i < 40; i++ {
		if got, err := callTool(t, m, nil, "write", `{"path":"/data/out","n":1000}`); err != nil || got != "wrote 1000" {
			t.Fatalf("rewrite %d: %q %v", i, got, err)
		}
	}
}
