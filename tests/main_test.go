package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
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
	// Built without -race: the race detector slows wazero's compiler
	// several times over; the packages' own tests run under -race.
	if wasmcpBin, err = e2e.BuildWasmcp(context.Background(), dir, false); err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	return m.Run()
}

// built is something the test binary makes at most once (a build, a
// certificate) for every test that needs it.
type built[T any] struct {
	once sync.Once
	v    T
	err  error
}

// get makes the value with make on first use. Every test then gets the
// value, or fails with the error making it gave.
func (b *built[T]) get(t *testing.T, make func() (T, error)) T {
	t.Helper()
	b.once.Do(func() { b.v, b.err = make() })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.v
}
