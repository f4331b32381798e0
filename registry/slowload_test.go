package registry

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// A module whose load is slow (its describe run spins until the describe
// deadline) holds up neither another file's load nor its publication.
func TestSlowLoadDoesNotHoldUpOthers(t *testing.T) {
	f := newFixture(t, WatchOptions{Settle: 10 * time.Millisecond})
	start := time.Now()
	f.deploy("spin.wasm", guestbuild.SpinningStart())
	time.Sleep(50 * time.Millisecond) // the spin module's load is under way
	f.deploy("small.wasm", smallV1)
	f.waitFor("small served", func() bool { return strings.Contains(f.call("small_hello"), "small v1") })
	if strings.Contains(f.logs.String(), "spin.wasm") && strings.Contains(f.logs.String(), "describe failed") {
		t.Fatalf("small was served only after the spin module's describe ended (%s)", time.Since(start))
	}
	f.waitFor("spin refused", func() bool { return strings.Contains(f.logs.String(), "describe failed") })
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("the spin module's describe took %s: not its describe budget", d)
	}
}
