package host

import (
	"context"
	"encoding/hex"
	"testing"
	"time"
)

// A module whose code names a global it does not define is invalid and
// must be refused at load, whatever the host adds to modules before
// compiling them: were the host to append a global of its own (say, an
// interrupt flag) before validating, this loop would name that global and
// clear it forever.
//
//	(module
//	  (memory (export "memory") 1)
//	  (func (export "_start")
//	    (loop $l (global.set 0 (i32.const 0)) (br $l))))
//
// (wat2wasm --no-check; global 0 does not exist.) Checked with the
// default engine and with Config.InstrumentLoops, whose rewriter appends
// exactly such a global.
func TestLoadRefusesUndefinedGlobal(t *testing.T) {
	wasm, err := hex.DecodeString("0061736d01000000010401600000030201000503010001071302066d656d6f72790200065f737461727400000a0d010b000340410024000c000b0b")
	if err != nil {
		t.Fatal(err)
	}
	for _, instrumented := range []bool{false, true} {
		e := newEngine(t, Limits{Timeout: 2 * time.Second})
		if instrumented {
			e = instrumentingEngine(t, Limits{Timeout: 2 * time.Second})
		}
		type loaded struct {
			m   *Module
			err error
		}
		done := make(chan loaded, 1)
		go func() {
			m, err := e.Load(context.Background(), "undefined-global", wasm, Policy{})
			done <- loaded{m, err}
		}()
		var m *Module
		select {
		case l := <-done:
			m, err = l.m, l.err
		case <-time.After(30 * time.Second):
			t.Fatalf("InstrumentLoops=%v: loading hung: the module was compiled, and its describe call outlived its 2s deadline by clearing the host's interrupt flag", instrumented)
		}
		if err == nil {
			m.Close(context.Background())
			t.Fatalf("InstrumentLoops=%v: a module writing an undefined global was loaded", instrumented)
		}
		if !IsKind(err, KindLoad) {
			t.Fatalf("InstrumentLoops=%v: got %v, want a load error", instrumented, err)
		}
	}
}
