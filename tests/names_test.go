package tests

import (
	"strings"
	"testing"
	"time"
)

// A served tool name stays with its module: a second module dropped in
// declaring it is refused whole, and a client that asked for logs at
// warning is told, naming both files.
func TestNameCollisionKeptAndVisible(t *testing.T) {
	t.Parallel()
	v1, _, cache := reloadBuild(t)
	dir := t.TempDir()
	deployFile(t, dir, "zz.wasm", v1)
	s := startServe(t, "--tools", dir, "--cache-dir", cache)
	c := newStdioClient(t, s)
	if got := c.request("logging/setLevel", `{"level":"warning"}`, nil); !strings.Contains(got, `"result"`) {
		t.Fatalf("setLevel: %s", got)
	}
	// aa.wasm sorts first and declares the same names.
	deployFile(t, dir, "aa.wasm", v1)
	deadline := time.After(30 * time.Second)
	for {
		var msg string
		select {
		case msg = <-c.notes():
		case <-deadline:
			t.Fatal("no notifications/message about aa.wasm")
		}
		if noteMethod(msg) != "notifications/message" {
			continue
		}
		if !strings.Contains(msg, `"level":"warning"`) || !strings.Contains(msg, `"file":"aa.wasm"`) || !strings.Contains(msg, `"served_by":"zz.wasm"`) {
			t.Fatalf("warning = %s", msg)
		}
		break
	}
	if got := c.request("tools/call", `{"name":"reload_version","arguments":{}}`, nil); !strings.Contains(got, "version v1") {
		t.Fatalf("call after the collision: %s", got)
	}
	if !strings.Contains(s.Stderr.String(), "module refused: it declares a name another module serves") {
		t.Fatalf("no WARN in the log:\n%s", s.Stderr.String())
	}
}
