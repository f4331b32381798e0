package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowLoadModule builds, from testdata/slowstart/slowstart.wat, a module
// whose every instance — its describe run at load included — sleeps 30 s
// before it serves: the slow module of TestListDoesNotWaitForTheSlowest.
func slowLoadModule(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("wat2wasm (wabt) missing in CI")
		}
		t.Skip("wat2wasm (wabt) is needed to build the 30 s module")
	}
	wat, err := os.ReadFile(filepath.Join("testdata", "slowstart", "slowstart.wat"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer("5000000000", "30000000000", "slowstart", "slowload", "slow_hello", "slowload_hello",
		"after a 5 s start-up", "after a 30 s start-up").Replace(string(wat))
	if src == string(wat) || !strings.Contains(src, "30000000000") {
		t.Fatal("slowstart.wat no longer has the 5 s sleep this test lengthens")
	}
	in := filepath.Join(t.TempDir(), "slowload.wat")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("wat2wasm", in, "-o", filepath.Join(dir, "slowload.wasm")).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, out)
	}
}

// TestListDoesNotWaitForTheSlowest: with the default --ready-wait, a
// tools/list sent while a module still loads (its start-up takes 30 s) is
// answered with the modules loaded by then, and the client is sent
// notifications/tools/list_changed when the slow one arrives; listing again
// then shows it.
func TestListDoesNotWaitForTheSlowest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small, err := os.ReadFile(filepath.Join("testdata", "small", "small.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.wasm"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	slowLoadModule(t, dir)
	// A cache of its own, so slowload's description is not cached; its
	// describe run sleeps 30 s, within the 60 s describe deadline.
	s := startServeLoading(t, "--tools", dir, "--cache-dir", t.TempDir(), "--watch=false", "--describe-timeout", "60s")
	c := newStdioClient(t, s)
	start := time.Now()
	list := c.request("tools/list", `{}`, nil)
	took := time.Since(start)
	if loadedYet(s) {
		t.Fatalf("the load ended (after more than 30 s) before tools/list was answered (%s): it waited for the slowest module", took)
	}
	if !strings.Contains(list, `"small_hello"`) || strings.Contains(list, `"slowload_hello"`) {
		t.Fatalf("tools/list during the load, after %s: %s", took, list)
	}
	waitNote(t, c, "notifications/tools/list_changed", 120*time.Second)
	waitFor(t, 30*time.Second, "slowload_hello to be listed", func() bool {
		return strings.Contains(c.request("tools/list", `{}`, nil), `"slowload_hello"`)
	})
}
