package registry

import (
	"strings"
	"testing"
	"time"
)

// spinDescribe is a hand-assembled command module without a description
// section whose _start spins: its describe run lasts until the describe
// deadline.
func spinDescribe() []byte {
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, sec(1, 1, 0x60, 0, 0)...) // type: () -> ()
	m = append(m, sec(3, 1, 0)...)          // function 0: type 0
	m = append(m, sec(5, 1, 0, 1)...)       // memory: min 1
	m = append(m, sec(7, 2,
		6, '_', 's', 't', 'a', 'r', 't', 0x00, 0,
		6, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0)...)
	body := []byte{0, 0x03, 0x40, 0x0C, 0, 0x0B, 0x0B} // loop; br 0; end; end
	m = append(m, sec(10, append([]byte{1, byte(len(body))}, body...)...)...)
	return m
}

// A module whose load is slow (its describe run spins until the describe
// deadline) holds up neither another file's load nor its publication.
func TestSlowLoadDoesNotHoldUpOthers(t *testing.T) {
	f := newFixture(t, WatchOptions{Settle: 10 * time.Millisecond})
	start := time.Now()
	f.deploy("spin.wasm", spinDescribe())
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
