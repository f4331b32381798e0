package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

var snapVersions built[[2][]byte]

// snapGuests builds testdata/snapguest (a Go reactor that asks for a
// snapshot) twice: as version 1 and as version 2, for the reload test.
func snapGuests(t *testing.T) (v1, v2 []byte) {
	t.Helper()
	v := snapVersions.get(t, func() ([2][]byte, error) {
		var v [2][]byte
		dir := filepath.Join(workDir, "snapguest")
		for i := range v {
			p := filepath.Join(dir, fmt.Sprintf("v%d.wasm", i+1))
			if err := guestbuild.BuildReactor(context.Background(), "testdata/snapguest", p,
				fmt.Sprintf("-ldflags=-s -w -X main.version=%d", i+1)); err != nil {
				return v, err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return v, err
			}
			v[i] = b
		}
		return v, nil
	})
	return v[0], v[1]
}

// toolText is the text of a tools/call answer's first content block.
func toolText(t *testing.T, m map[string]any) string {
	t.Helper()
	r := resultOf(t, m)
	content, _ := r["content"].([]any)
	if len(content) == 0 || r["isError"] == true {
		t.Fatalf("tool answer: %v", m)
	}
	return content[0].(map[string]any)["text"].(string)
}

// TestSnapshotGuest serves a Go reactor from its snapshot and checks what
// a snapshot must keep: every call starts from the start-up state (also 16
// at once), crypto/rand differs per call, a multi round-trip re-run starts
// fresh, a task runs and is cancelled, a hot reload takes a new snapshot,
// and wasmcp inspect says the module runs from a snapshot.
func TestSnapshotGuest(t *testing.T) {
	v1, v2 := snapGuests(t)
	tools := t.TempDir()
	deployFile(t, tools, "snap.wasm", v1)
	cache := filepath.Join(t.TempDir(), "cache")

	out, err := exec.Command(wasmcpBin, "inspect", "--cache-dir", cache, filepath.Join(tools, "snap.wasm")).CombinedOutput()
	if err != nil {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	var inspected struct {
		Shape    string `json:"shape"`
		Snapshot struct {
			Used bool `json:"used"`
		} `json:"snapshot"`
	}
	if err := json.Unmarshal(out, &inspected); err != nil || inspected.Shape != "reactor" || !inspected.Snapshot.Used {
		t.Fatalf("inspect says %s (%v); want a reactor running from a snapshot", out, err)
	}

	s := startServe(t, "--tools", tools, "--cache-dir", cache, "--watch=true", "--data-dir", "-")
	c := newModernLines(t, s)
	call := func(id, name, members string) map[string]any {
		return c.call(id, "tools/call", everyCap, `"name":"`+name+`","arguments":{}`+members)
	}
	if got := toolText(t, call("1", "count", "")); got != "v1:42" {
		t.Fatalf("count: %q, want v1:42", got)
	}
	// 16 at once: each its own instance, each from the snapshot.
	var chans []chan string
	for i := 0; i < 16; i++ {
		chans = append(chans, c.start(fmt.Sprint(100+i), "tools/call", everyCap, `"name":"count","arguments":{}`))
	}
	for i, ch := range chans {
		select {
		case line := <-ch:
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			if got := toolText(t, m); got != "v1:42" {
				t.Errorf("concurrent call %d: %q, want v1:42", i, got)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("concurrent call %d: no answer", i)
		}
	}
	a, b := toolText(t, call("2", "random", "")), toolText(t, call("3", "random", ""))
	if a == b || len(a) != 32 {
		t.Fatalf("crypto/rand: %q then %q; want different bytes on every call", a, b)
	}
	// A multi round-trip call: the re-run is a fresh instance from the
	// snapshot too (the counter is 42 again, not 43).
	r1 := resultOf(t, call("4", "ask", ""))
	if r1["resultType"] != "input_required" {
		t.Fatalf("round 1: %v", r1)
	}
	var key string
	for k := range r1["inputRequests"].(map[string]any) {
		key = k
	}
	r2 := call("5", "ask", `,"requestState":"`+r1["requestState"].(string)+`","inputResponses":{"`+key+`":{"action":"accept","content":{"name":"Ada"}}}`)
	if got := toolText(t, r2); got != "hello Ada (42)" {
		t.Fatalf("round 2: %q, want hello Ada (42)", got)
	}

	// Hot reload: version 2 replaces version 1 and gets its own snapshot.
	deployFile(t, tools, "snap.wasm", v2)
	// Ids stay within ±(2^53−1), which the server requires of integer ids
	// (a nanosecond clock is past it, and such a call is refused -32600).
	next := 1000
	waitFor(t, 2*time.Minute, "version 2 to serve", func() bool {
		next++
		return toolText(t, call(fmt.Sprint(next), "count", "")) == "v2:42"
	})
	if n := strings.Count(s.Stderr.String(), "module runs from a snapshot"); n < 2 {
		t.Fatalf("%d snapshots logged; want one per version:\n%s", n, s.Stderr.String())
	}

	// Tasks (a 2025-11-25 session): one completes, one is cancelled.
	l := newStdioLegacy(t, startServe(t, "--tools", tools, "--cache-dir", cache, "--watch=false", "--data-dir", "-"))
	id := resultMap(t, l.call("tools/call", `{"name":"count","arguments":{},"task":{}}`))["task"].(map[string]any)["taskId"].(string)
	res := resultMap(t, l.call("tasks/result", `{"taskId":"`+id+`"}`))
	if !strings.Contains(fmt.Sprint(res["content"]), "v2:42") {
		t.Fatalf("task result: %v", res)
	}
	spin := resultMap(t, l.call("tools/call", `{"name":"spin","arguments":{},"task":{}}`))["task"].(map[string]any)["taskId"].(string)
	time.Sleep(100 * time.Millisecond)
	if got := resultMap(t, l.call("tasks/cancel", `{"taskId":"`+spin+`"}`)); got["status"] != "cancelled" {
		t.Fatalf("tasks/cancel: %v", got)
	}
	res = resultMap(t, l.call("tools/call", `{"name":"count","arguments":{}}`))
	if !strings.Contains(fmt.Sprint(res["content"]), "v2:42") {
		t.Fatalf("after the cancel: %v", res)
	}
}
