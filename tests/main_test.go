package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Shared harness for every end-to-end test in this package: TestMain builds
// the wasmcp command once into a temporary directory; tests start it with
// exec.Command(wasmcpBin, ...). Add helpers beside it instead of a second
// TestMain.
var (
	// wasmcpBin is the path of the wasmcp binary built for this run.
	wasmcpBin string
	// workDir is a temporary directory removed when the tests end; helpers
	// put built guests and other shared artifacts under it.
	workDir string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wasmcp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	workDir = dir
	// wasmcp serve keeps its task store under $XDG_DATA_HOME by default:
	// the servers the tests start keep theirs here, not in the user's home.
	os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	wasmcpBin = filepath.Join(dir, "wasmcp")
	if runtime.GOOS == "windows" {
		wasmcpBin += ".exe"
	}
	// Built without -race: the race detector slows wazero's compiler
	// several times over; the packages' own tests run under -race.
	cmd := exec.Command("go", "build", "-o", wasmcpBin, "../cmd/wasmcp")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tests: building wasmcp:", err)
		return 1
	}
	return m.Run()
}
