package tests

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterpreterTierNewModule drops a Go reactor never seen before (an
// empty cache) into a running server's tools directory and calls it: the
// server describes it and serves its first calls from wazero's
// interpreter, then from the compiled code once it is built, with the
// same answers; a restart on the warm cache loads it compiled at once.
// Correctness only: how soon it answers is measured in bench/manymodules.
func TestInterpreterTierNewModule(t *testing.T) {
	v1, _ := snapGuests(t)
	tools := t.TempDir()
	cache := filepath.Join(t.TempDir(), "cache")
	s := startServe(t, "--tools", tools, "--cache-dir", cache, "--watch=true", "--data-dir", "-")
	c := newModernLines(t, s)
	seq := 0
	count := func() string {
		seq++
		b, _ := json.Marshal(c.call(fmt.Sprint(seq), "tools/call", everyCap, `"name":"count","arguments":{}`))
		return string(b)
	}
	deployFile(t, tools, "fresh.wasm", v1)
	waitFor(t, 3*time.Minute, "the new module to answer", func() bool { return strings.Contains(count(), "v1:42") })
	log := s.Stderr.String()
	if !strings.Contains(log, "module loaded") || !strings.Contains(log, "tier=interpreter") {
		t.Fatalf("the new module was not loaded on the interpreter:\n%s", log)
	}
	waitFor(t, 5*time.Minute, "the compiled code to take over", func() bool {
		return strings.Contains(s.Stderr.String(), "new calls run on the compiled code")
	})
	for i := 0; i < 3; i++ {
		if got := count(); !strings.Contains(got, "v1:42") {
			t.Fatalf("a call on the compiled code: %s", got)
		}
	}
	if got := toolText(t, c.call("9999", "tools/call", everyCap, `"name":"random","arguments":{}`)); len(got) != 32 {
		t.Fatalf("random on the compiled code: %q", got)
	}

	// A restart finds the compiled code in the cache: no interpreter.
	s2 := startServe(t, "--tools", tools, "--cache-dir", cache, "--watch=false", "--data-dir", "-")
	c2 := newModernLines(t, s2)
	if got := toolText(t, c2.call("1", "tools/call", everyCap, `"name":"count","arguments":{}`)); got != "v1:42" {
		t.Fatalf("after a restart: %q", got)
	}
	if log := s2.Stderr.String(); strings.Contains(log, "tier=interpreter") || strings.Contains(log, "built for the interpreter") {
		t.Fatalf("a warm start used the interpreter:\n%s", log)
	}
}
