package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/registry"
)

// TestPulledNames: a pulled version is described without its grants — a
// variable read from the host (a secret) never reaches the guest, a
// mount of a directory missing on this machine does not fail it — and
// under limits no higher than serve's: a policy raising memory to 4GiB
// is described with the default cap, one lowering it keeps its own.
func TestPulledNames(t *testing.T) {
	wasm, err := os.ReadFile("../tests/testdata/small/small.wasm")
	if err != nil {
		t.Fatal(err)
	}
	e := pullEngine(t, nil)
	t.Setenv("WASMCP_TEST_SECRET", "s3cret")
	policy := []byte("memory = \"4GiB\"\n[env]\nTOKEN = { from = \"WASMCP_TEST_SECRET\" }\n[[mount]]\nguest = \"/data\"\nhost = \"/no/such/dir\"\n[[http.allow]]\nhost = \"api.example\"\n[access]\nscopes = [\"admin\"]\n")
	names, err := PulledNames(e)(context.Background(), "small", wasm, policy)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"tool small_hello"}) {
		t.Errorf("names %q, want [tool small_hello]", names)
	}
	pol, err := describePolicy(policy, e.Limits())
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.Env) != 0 || len(pol.Mounts) != 0 || pol.HTTP != nil || !pol.Access.Grant.Open() {
		t.Errorf("grants applied to a version not approved: %+v", pol)
	}
	if def := host.DefaultLimits().MemoryBytes; pol.Limits.MemoryBytes != def {
		t.Errorf("memory %d, want the default %d (a pulled policy cannot raise it before approval)", pol.Limits.MemoryBytes, def)
	}
	pol, err = describePolicy([]byte("memory = \"16MiB\"\n"), e.Limits())
	if err != nil || pol.Limits.MemoryBytes != 16<<20 {
		t.Errorf("a lower memory cap: %d, %v; want 16MiB kept", pol.Limits.MemoryBytes, err)
	}
}

// TestPulledNamesSpinning: a pulled module whose describe spins is
// refused at its describe deadline (its own CPU time), not waited for:
// wasmcp pull ends with an error naming the deadline.
func TestPulledNamesSpinning(t *testing.T) {
	e := pullEngine(t, func(c *host.Config) { c.DescribeTimeout = 300 * time.Millisecond })
	// A policy asking for a longer timeout changes nothing: the describe
	// deadline is the engine's.
	_, err := PulledNames(e)(context.Background(), "spin", guestbuild.SpinningStart(), []byte("timeout = \"1h\"\n"))
	if err == nil || !strings.Contains(err.Error(), "describe") {
		t.Fatalf("a spinning describe: %v, want it refused", err)
	}
}

// TestDirNames: the names of a tools directory's modules, each with its
// file, leaving out the pulled tool's own file; a module that does not
// load is reported and left out; a missing directory declares nothing.
func TestDirNames(t *testing.T) {
	wasm, err := os.ReadFile("../tests/testdata/small/small.wasm")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"small.wasm": wasm, "echo.wasm": wasm, "broken.wasm": []byte("not wasm"), ".hidden.wasm": wasm} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := pullEngine(t, nil)
	var skipped []string
	got, err := DirNames(context.Background(), e, dir, "small", func(f string, _ error) { skipped = append(skipped, filepath.Base(f)) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["tool small_hello"] != filepath.Join(dir, "echo.wasm") {
		t.Errorf("names %v, want tool small_hello from echo.wasm (small.wasm is the pulled tool's own)", got)
	}
	if !slices.Equal(skipped, []string{"broken.wasm"}) {
		t.Errorf("skipped %v, want [broken.wasm]", skipped)
	}
	if got, err := DirNames(context.Background(), e, filepath.Join(dir, "none"), "x", nil); err != nil || len(got) != 0 {
		t.Errorf("a missing directory: %v, %v", got, err)
	}
}

// TestServedNamesCheck: pull approves the names a version declares
// described without its grants; the twoface guest declares another tool
// once it runs with its [env] grant. Serve's check of a pulled module
// (registry.SetPulledCheck) refuses it for the name no one approved, and
// lets it serve once the lock's names hold every name it declares.
func TestServedNamesCheck(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "twoface.wasm")
	if err := guestbuild.Build(context.Background(), "testdata/guests/twoface", out); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	e := pullEngine(t, nil)
	policy := []byte("[env]\nTWOFACE = \"1\"\n")
	approved, err := PulledNames(e)(context.Background(), "twoface", wasm, policy)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(approved, []string{"tool hello"}) {
		t.Fatalf("described without its grants: %q, want [tool hello]", approved)
	}
	if err := os.WriteFile(filepath.Join(dir, "twoface.policy.toml"), policy, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := registry.DescribeFile(context.Background(), e, out)
	if err != nil {
		t.Fatal(err)
	}
	lock := func(names []string) {
		t.Helper()
		if err := pull.WriteLock(dir, &pull.Lock{Tools: []pull.Tool{{Name: "twoface", Reference: "registry.example/twoface:1",
			Digest: "sha256:" + strings.Repeat("0", 64), Signed: new(bool), Names: &names}}}); err != nil {
			t.Fatal(err)
		}
	}
	check := servedNamesCheck(dir)
	lock(approved)
	if err := check("twoface", d); err == nil || !strings.Contains(err.Error(), "tool extra") {
		t.Fatalf("served with its grants it declares %q; approved %q: the check said %v", NameLines(d), approved, err)
	}
	lock([]string{"tool extra", "tool hello"})
	if err := check("twoface", d); err != nil {
		t.Fatalf("every name approved: %v", err)
	}
	if err := check("another", d); err != nil {
		t.Fatalf("a module with no entry in the lock: %v", err)
	}
}

// pullEngine is serve's default engine without a cache directory, set
// further by set (when not nil), closed when the test ends.
func pullEngine(t *testing.T, set func(*host.Config)) *host.Engine {
	t.Helper()
	cfg := DefaultEngine()
	cfg.CacheDir = "-"
	if set != nil {
		set(&cfg)
	}
	e, err := host.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}
