package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

// Tests of the Rust guest SDK (guest-sdk/rust) through the reference tool
// set written with it (examples/reference/rust): built with its build.sh
// and Debian's Rust toolchain, served by wasmcp serve over stdio, driven by
// a 2025-11-25 client and a 2026-07-28 one. The shared suite
// (reference_test.go) runs every SDK's set; this one checks the crate's
// own promises: schemas derived from serde types come out exactly as the
// reference prescribes, requests to the client round-trip, keyed requests
// replay under MRTR.

var rustRef struct {
	once sync.Once
	dir  string // holds reference.wasm
	skip string // why the set cannot be built here
	err  error
}

// rustReference builds the Rust reference set once per test binary and
// returns the directory holding reference.wasm.
func rustReference(t *testing.T) string {
	t.Helper()
	rustRef.once.Do(func() {
		rustRef.dir = filepath.Join(workDir, "rust-reference")
		// The machine may be loaded and cargo compiles serde_derive and
		// syn from source the first time: a generous bound.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join("..", "examples", "reference", "rust", "build.sh"), rustRef.dir)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 3:
			rustRef.skip = stderr.String()
		case err != nil:
			rustRef.err = fmt.Errorf("examples/reference/rust/build.sh: %v\n%s", err, stderr.Bytes())
		}
	})
	if rustRef.skip != "" {
		t.Skip(rustRef.skip)
	}
	if rustRef.err != nil {
		t.Fatal(rustRef.err)
	}
	return rustRef.dir
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// TestRustSDKReference drives the Rust reference set through wasmcp serve
// --stdio with a 2025-11-25 client that answers elicitation.
func TestRustSDKReference(t *testing.T) {
	tools := rustReference(t)
	s := startServe(t, "--tools", tools, "--stdio", "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--watch=false")
	r := newRawSession(t, s)
	r.result("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
	})
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// tools/list: the schemas derived from the serde types are exactly the
	// reference's.
	want := map[string][2]string{
		"echo": {`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
			`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`},
		"sum": {`{"type":"object","properties":{"numbers":{"type":"array","items":{"type":"number"}}},"required":["numbers"]}`,
			`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`},
		"progress": {`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":20}},"required":["steps"]}`, ``},
		"ask":      {`{"type":"object"}`, ``},
	}
	listed := r.result("tools/list", map[string]any{})["tools"].([]any)
	if len(listed) != len(want) {
		t.Fatalf("tools/list: %v", listed)
	}
	for _, e := range listed {
		tool := e.(map[string]any)
		name, _ := tool["name"].(string)
		w, ok := want[name]
		if !ok {
			t.Fatalf("unexpected tool %v", tool)
		}
		if !reflect.DeepEqual(tool["inputSchema"], mustJSON(t, w[0])) {
			t.Errorf("%s inputSchema = %v, want %s", name, tool["inputSchema"], w[0])
		}
		if w[1] == "" && tool["outputSchema"] != nil || w[1] != "" && !reflect.DeepEqual(tool["outputSchema"], mustJSON(t, w[1])) {
			t.Errorf("%s outputSchema = %v, want %q", name, tool["outputSchema"], w[1])
		}
	}

	// echo: text and structured content.
	res := r.result("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "héllo \"there\"\n"}})
	if got := firstText(t, res); got != "héllo \"there\"\n" || !reflect.DeepEqual(res["structuredContent"], map[string]any{"text": "héllo \"there\"\n"}) || res["isError"] != nil {
		t.Errorf("echo: %v", res)
	}
	// Invalid arguments never reach the guest; the client gets an error.
	if res := r.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": 7}}); res["error"] == nil &&
		res["result"].(map[string]any)["isError"] != true {
		t.Errorf("echo with a number: %v", res)
	}

	// sum: the text is a JSON number.
	for _, c := range []struct {
		in   []any
		text string
		sum  float64
	}{{[]any{1, 2, 3}, "6", 6}, {[]any{1, 1.5}, "2.5", 2.5}, {[]any{}, "0", 0}, {[]any{-0.25}, "-0.25", -0.25}} {
		res := r.result("tools/call", map[string]any{"name": "sum", "arguments": map[string]any{"numbers": c.in}})
		if got := firstText(t, res); got != c.text || !reflect.DeepEqual(res["structuredContent"], map[string]any{"sum": c.sum}) {
			t.Errorf("sum %v: %v, want text %q", c.in, res, c.text)
		}
	}

	// progress with a token: steps notifications, 1..steps of steps.
	if got := r.toolText("progress", map[string]any{"steps": 3}, map[string]any{"progressToken": "tok-1"}); got != "done 3" {
		t.Errorf("progress: %q", got)
	}
	notes := r.notifications("notifications/progress")
	if len(notes) != 3 {
		t.Fatalf("progress notifications: %v", notes)
	}
	for i, n := range notes {
		p := n["params"].(map[string]any)
		if p["progressToken"] != "tok-1" || p["progress"] != float64(i+1) || p["total"] != float64(3) {
			t.Errorf("progress notification %d: %v", i, p)
		}
	}
	// Without a token: the result, no notifications.
	if got := r.toolText("progress", map[string]any{"steps": 2}, nil); got != "done 2" || len(r.notifications("notifications/progress")) != 3 {
		t.Errorf("progress without a token: %q, %d notifications", got, len(r.notifications("notifications/progress")))
	}

	// ask: accept, decline, an error answer.
	answer := func(f func(json.RawMessage) any) {
		r.mu.Lock()
		r.answer["elicitation/create"] = f
		r.mu.Unlock()
	}
	var asked json.RawMessage
	answer(func(p json.RawMessage) any {
		asked = p
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}
	})
	if got := r.toolText("ask", map[string]any{}, nil); got != "hello Ada" {
		t.Errorf("ask accepted: %q", got)
	}
	wantAsk := `{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`
	if !reflect.DeepEqual(mustJSON(t, string(asked)), mustJSON(t, wantAsk)) {
		t.Errorf("elicitation params %s, want %s", asked, wantAsk)
	}
	for _, action := range []string{"decline", "cancel"} {
		answer(func(json.RawMessage) any { return map[string]any{"action": action} })
		if got := r.toolText("ask", map[string]any{}, nil); got != "no name given" {
			t.Errorf("ask %s: %q", action, got)
		}
	}
	answer(nil) // the session answers -32601 "no elicitation/create"
	res = r.result("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}})
	if res["isError"] != true || firstText(t, res) != "no elicitation/create" {
		t.Errorf("ask answered with an error: %v", res)
	}

	// The resource and the prompt.
	rl := r.result("resources/list", map[string]any{})["resources"].([]any)
	if len(rl) != 1 || !reflect.DeepEqual(rl[0], map[string]any{"uri": "ref://greeting", "name": "greeting", "mimeType": "text/plain"}) {
		t.Errorf("resources/list: %v", rl)
	}
	read := r.result("resources/read", map[string]any{"uri": "ref://greeting"})["contents"].([]any)
	if len(read) != 1 || !reflect.DeepEqual(read[0], map[string]any{"uri": "ref://greeting", "mimeType": "text/plain", "text": "hello from the reference tools"}) {
		t.Errorf("resources/read: %v", read)
	}
	pl := r.result("prompts/list", map[string]any{})["prompts"].([]any)
	if len(pl) != 1 || pl[0].(map[string]any)["name"] != "greet" ||
		!reflect.DeepEqual(pl[0].(map[string]any)["arguments"], []any{map[string]any{"name": "name", "description": "who to greet", "required": true}}) {
		t.Errorf("prompts/list: %v", pl)
	}
	got := r.result("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Bob"}})["messages"]
	if !reflect.DeepEqual(got, []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say hello to Bob."}}}) {
		t.Errorf("prompts/get: %v", got)
	}
	// A missing required argument is the guest's -32602.
	if e, _ := r.call("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{}})["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
		t.Errorf("prompts/get without name: %v", e)
	}
	if t.Failed() {
		t.Logf("server log:\n%s", s.Stderr.String())
	}
}

// TestRustSDKReferenceMRTR runs ask under MCP 2026-07-28: the SDK's keyed
// elicitation becomes an input_required result, and the client's retry
// replays the guest with the answer; a client without the capability gets
// the reference's error result.
func TestRustSDKReferenceMRTR(t *testing.T) {
	tools := rustReference(t)
	c := newModernLines(t, startServe(t, "--tools", tools, "--watch=false", "--cache-dir", filepath.Join(t.TempDir(), "cache")))
	const ask = `"name":"ask","arguments":{}`
	r1 := resultOf(t, c.call("1", "tools/call", `{"elicitation":{}}`, ask))
	req, _ := r1["inputRequests"].(map[string]any)["name"].(map[string]any)
	if r1["resultType"] != "input_required" || req["method"] != "elicitation/create" ||
		req["params"].(map[string]any)["message"] != "What is your name?" {
		t.Fatalf("round 1: %v", r1)
	}
	r2 := resultOf(t, c.call("2", "tools/call", `{"elicitation":{}}`, ask+`,"requestState":"`+r1["requestState"].(string)+
		`","inputResponses":{"name":{"action":"accept","content":{"name":"Grace"}}}`))
	if content := r2["content"].([]any)[0].(map[string]any); r2["resultType"] != "complete" || content["text"] != "hello Grace" {
		t.Fatalf("round 2: %v", r2)
	}
	// No elicitation capability: the guest gets -32021 at once and answers
	// an error result with its message.
	r3 := resultOf(t, c.call("3", "tools/call", `{}`, ask))
	if r3["isError"] != true || r3["content"].([]any)[0].(map[string]any)["text"] == "" {
		t.Fatalf("without the capability: %v", r3)
	}
}
