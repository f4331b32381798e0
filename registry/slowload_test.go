package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/internal/tstransform"
)

// A module whose load is slow (its describe run spins until the describe
// deadline, counted in its own CPU time) holds up neither another file's
// load nor its publication.
func TestSlowLoadDoesNotHoldUpOthers(t *testing.T) {
	f := newFixtureWith(t, WatchOptions{Settle: 10 * time.Millisecond},
		host.Config{DescribeTimeout: 300 * time.Millisecond, LoadCeiling: 10 * time.Second})
	start := time.Now()
	f.deploy("spin.wasm", guestbuild.SpinningStart())
	time.Sleep(50 * time.Millisecond) // the spin module's load is under way
	f.deploy("small.wasm", smallV1)
	f.waitFor("small served", func() bool { return strings.Contains(f.call("small_hello"), "small v1") })
	if strings.Contains(f.logs.String(), "spin.wasm") && strings.Contains(f.logs.String(), "describe failed") {
		t.Fatalf("small was served only after the spin module's describe ended (%s)", time.Since(start))
	}
	// Its end: refused for spinning past 300ms of CPU, or, on a machine
	// too busy to give it that within the ceiling, to be tried again.
	f.waitFor("spin refused", func() bool {
		l := f.logs.String()
		return strings.Contains(l, "describe failed") || strings.Contains(l, "module load cut by a busy machine; retrying")
	})
}

// TestLoadCutByABusyMachineComesBack: a module whose describe run the
// wall-clock ceiling cut (its guest under its own deadline: the machine
// was busy) is not refused but retried, shown as retrying meanwhile, and
// loads by itself once a run fits, without a change to its file or a
// reload.
func TestLoadCutByABusyMachineComesBack(t *testing.T) {
	slow, err := os.ReadFile(filepath.Join("..", "tests", "testdata", "slowstart", "slowstart.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	// slowstart's describe run sleeps 5 s: its own time, under 30 s, but
	// past a ceiling of 1 s, as a guest held up by a busy machine is.
	f := newFixtureWith(t, WatchOptions{Settle: 10 * time.Millisecond},
		host.Config{DescribeTimeout: 30 * time.Second, LoadCeiling: time.Second})
	f.deploy("slow.wasm", slow)
	f.waitFor("slow retrying", func() bool { return f.reg.Retrying()["slow.wasm"] > 0 })
	if l := f.logs.String(); strings.Contains(l, "module refused") || !strings.Contains(l, "the machine is busy") {
		t.Fatalf("a load cut by the ceiling was refused, or not said to be: %s", l)
	}
	f.engine.SetLoadCeiling(0) // the machine is quiet again: the default ceiling
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(f.call("slow_hello"), "hello from slowstart") {
		if time.Now().After(deadline) {
			t.Fatal("the module did not come back")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := len(f.reg.Retrying()); n != 0 {
		t.Fatalf("%d files still retrying after the module loaded", n)
	}
}

// TestTransformCutByABusyMachineComesBack: a .ts whose transform the wall
// ceiling cut (a busy machine) is loaded again later, not refused until
// the file changes.
func TestTransformCutByABusyMachineComesBack(t *testing.T) {
	useRunner(t)
	restore := tstransform.SetWallCeilingForTest(time.Nanosecond)
	defer restore()
	f := newFixtureWith(t, WatchOptions{Settle: 10 * time.Millisecond}, host.Config{})
	f.deploy("greet.ts", []byte(`const { McpServer } = require("wasmcp");
const s = new McpServer({ name: "greet", version: "1.0.0" });
s.registerTool("greet", { description: "greets", inputSchema: { type: "object" } }, async (): Promise<string> => "hello from greet");
`))
	f.waitFor("greet.ts retrying", func() bool { return f.reg.Retrying()["greet.ts"] > 0 })
	if l := f.logs.String(); strings.Contains(l, "module refused") {
		t.Fatalf("a transform cut by the ceiling was refused: %s", l)
	}
	restore() // the machine is quiet again
	deadline := time.Now().Add(120 * time.Second)
	for !strings.Contains(f.call("greet"), "hello from greet") {
		if time.Now().After(deadline) {
			t.Fatal("the script did not come back")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
