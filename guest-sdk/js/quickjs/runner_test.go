package quickjs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// TestRunnerShape: the committed runner is a snapshot-able reactor (it
// exports wasmcp_main and wasmcp_snapshot) and stays small.
func TestRunnerShape(t *testing.T) {
	exports, err := wasmrewrite.Exports(Runner)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wasmcp_main", "wasmcp_snapshot", "_initialize"} {
		if kind, ok := exports[name]; !ok || kind != wasmrewrite.ImportFunc {
			t.Errorf("the runner does not export the function %s", name)
		}
	}
	if len(Runner) > 2<<20 {
		t.Errorf("the runner is %d bytes, more than 2 MiB", len(Runner))
	}
}

// TestRunnerIsFresh rebuilds the runner with build.sh (clang-14,
// wasi-libc and npm, which fetches QuickJS's sources) and checks that
// runner.wasm is byte for byte what its inputs build.
func TestRunnerIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds QuickJS")
	}
	for _, tool := range []string{"clang-14", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32 npm)", tool)
		}
	}
	if _, err := os.Stat("/usr/lib/wasm32-wasi/libc.a"); err != nil {
		t.Skip("wasi-libc is not installed (apt-get install wasi-libc)")
	}
	out := filepath.Join(t.TempDir(), "runner.wasm")
	if b, err := exec.Command("sh", "build.sh", out).CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, b)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, Runner) {
		t.Errorf("guest-sdk/js/quickjs/runner.wasm is not what its sources build (%d bytes built, %d committed): run guest-sdk/js/quickjs/build.sh and commit the result", len(built), len(Runner))
	}
}
