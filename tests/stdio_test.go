package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawSession is a 2025-11-25 client on wasmcp serve's stdin/stdout that
// answers the server's own requests (elicitation, roots) and records every
// notification, so tests can check exactly what went over the wire.
type rawSession struct {
	t     *testing.T
	s     *served
	mu    sync.Mutex
	resp  map[string]chan map[string]any
	notes []map[string]any
	// answer answers a server-to-client request by method.
	answer map[string]func(params json.RawMessage) any
	asked  []string
}

func newRawSession(t *testing.T, s *served) *rawSession {
	r := &rawSession{t: t, s: s, resp: map[string]chan map[string]any{}, answer: map[string]func(json.RawMessage) any{}}
	go r.read()
	return r
}

func (r *rawSession) read() {
	sc := bufio.NewScanner(r.s.Stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			r.t.Errorf("server wrote a line that is not JSON: %q", line)
			continue
		}
		id, hasID := m["id"]
		method, _ := m["method"].(string)
		switch {
		case method != "" && hasID:
			r.mu.Lock()
			r.asked = append(r.asked, method)
			f := r.answer[method]
			r.mu.Unlock()
			idJSON, _ := json.Marshal(id)
			if f == nil {
				r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s"}}`, idJSON, method))
				continue
			}
			params, _ := json.Marshal(m["params"])
			res, _ := json.Marshal(f(params))
			r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, idJSON, res))
		case method != "":
			r.mu.Lock()
			r.notes = append(r.notes, m)
			r.mu.Unlock()
		default:
			key := fmt.Sprint(id)
			r.mu.Lock()
			ch := r.resp[key]
			delete(r.resp, key)
			r.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (r *rawSession) send(line string) {
	if _, err := r.s.Stdin.Write([]byte(line + "\n")); err != nil {
		r.t.Errorf("write: %v", err)
	}
}

var rawID struct {
	sync.Mutex
	n int
}

// call sends a request and waits for its response.
func (r *rawSession) call(method string, params any) map[string]any {
	r.t.Helper()
	rawID.Lock()
	rawID.n++
	id := rawID.n
	rawID.Unlock()
	ch := make(chan map[string]any, 1)
	r.mu.Lock()
	r.resp[fmt.Sprint(id)] = ch
	r.mu.Unlock()
	p, _ := json.Marshal(params)
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
	select {
	case m := <-ch:
		return m
	case <-time.After(90 * time.Second):
		r.t.Fatalf("no answer to %s", method)
		return nil
	}
}

// result returns the result of a successful call, failing the test on an
// error response.
func (r *rawSession) result(method string, params any) map[string]any {
	r.t.Helper()
	m := r.call(method, params)
	res, ok := m["result"].(map[string]any)
	if !ok {
		r.t.Fatalf("%s: no result: %v", method, m)
	}
	return res
}

// toolText calls a tool and returns its first text content; isError fails.
func (r *rawSession) toolText(name string, args any, meta map[string]any) string {
	r.t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	res := r.result("tools/call", params)
	if res["isError"] == true {
		r.t.Fatalf("tool %s failed: %v", name, res)
	}
	return firstText(r.t, res)
}

func firstText(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content: %v", res)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

func (r *rawSession) notifications(method string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, n := range r.notes {
		if n["method"] == method {
			out = append(out, n)
		}
	}
	return out
}

// TestStdioExamples drives wasmcp serve --stdio, as a separate process, the
// way a desktop client does, through every example module.
func TestStdioExamples(t *testing.T) {
	s := startServe(t, "--tools", exampleTools(t), "--stdio", "--cache-dir", compileCache, "--watch=false")
	r := newRawSession(t, s)
	r.answer["elicitation/create"] = func(p json.RawMessage) any {
		if !strings.Contains(string(p), "Approve this plan?") {
			t.Errorf("elicitation params: %s", p)
		}
		return map[string]any{"action": "accept", "content": map[string]any{"approve": true, "comment": "ship it"}}
	}
	r.answer["roots/list"] = func(json.RawMessage) any {
		return map[string]any{"roots": []any{map[string]any{"uri": "file:///work/project", "name": "project"}}}
	}

	init := r.result("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{}, "roots": map[string]any{}},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
	})
	if init["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %v", init)
	}
	caps := init["capabilities"].(map[string]any)
	for _, c := range []string{"tools", "resources", "prompts", "logging", "completions"} {
		if _, ok := caps[c]; !ok {
			t.Errorf("capability %s missing: %v", c, caps)
		}
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	t.Run("tools/list", func(t *testing.T) {
		tools := r.result("tools/list", map[string]any{})["tools"].([]any)
		var names []string
		for _, x := range tools {
			names = append(names, x.(map[string]any)["name"].(string))
		}
		want := "client_roots,confirm_plan,fetch,github_issues,hash,json_query,text_stats,transcode,word_count"
		if strings.Join(names, ",") != want {
			t.Fatalf("tools %v, want %s (sorted)", names, want)
		}
	})
	t.Run("json_query", func(t *testing.T) {
		res := r.result("tools/call", map[string]any{"name": "json_query", "arguments": map[string]any{
			"json": `{"users":[{"name":"ada","age":36},{"name":"alan","age":41}]}`, "path": "users[*].name"}})
		if res["isError"] == true {
			t.Fatal(res)
		}
		sc, _ := json.Marshal(res["structuredContent"])
		if !strings.Contains(string(sc), `"ada"`) || !strings.Contains(string(sc), `"alan"`) {
			t.Fatalf("structuredContent %s", sc)
		}
	})
	t.Run("text_stats with progress and logs", func(t *testing.T) {
		r.result("logging/setLevel", map[string]any{"level": "debug"})
		res := r.result("tools/call", map[string]any{"name": "text_stats",
			"arguments": map[string]any{"text": "The cat sat. The cat ran! Did the dog?"},
			"_meta":     map[string]any{"progressToken": "stats-1"}})
		sc := res["structuredContent"].(map[string]any)
		if sc["words"] != float64(9) || sc["sentences"] != float64(3) {
			t.Fatalf("stats %v", sc)
		}
		var progress []float64
		for _, n := range r.notifications("notifications/progress") {
			p := n["params"].(map[string]any)
			if p["progressToken"] == "stats-1" {
				progress = append(progress, p["progress"].(float64))
			}
		}
		if len(progress) < 3 {
			t.Fatalf("progress notifications %v, want at least 3", progress)
		}
		for i := 1; i < len(progress); i++ {
			if progress[i] < progress[i-1] {
				t.Fatalf("progress decreases: %v", progress)
			}
		}
		if len(r.notifications("notifications/message")) == 0 {
			t.Fatal("no log notification")
		}
	})
	t.Run("hash and transcode", func(t *testing.T) {
		got := r.toolText("hash", map[string]any{"algorithm": "sha256", "text": "abc"}, nil)
		if !strings.Contains(got, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
			t.Fatalf("hash: %s", got)
		}
		if got := r.toolText("transcode", map[string]any{"scheme": "base64", "direction": "encode", "text": "hello"}, nil); !strings.Contains(got, "aGVsbG8=") {
			t.Fatalf("transcode: %s", got)
		}
		bad := r.result("tools/call", map[string]any{"name": "transcode", "arguments": map[string]any{"scheme": "base64", "direction": "decode", "text": "@@@"}})
		if bad["isError"] != true {
			t.Fatalf("bad base64 not a tool error: %v", bad)
		}
	})
	t.Run("invalid arguments", func(t *testing.T) {
		res := r.result("tools/call", map[string]any{"name": "hash", "arguments": map[string]any{"algorithm": "crc32", "text": "x"}})
		if res["isError"] != true || !strings.Contains(firstText(t, res), "Invalid arguments") {
			t.Fatalf("%v", res)
		}
	})
	t.Run("elicitation reaches the client and its answer the guest", func(t *testing.T) {
		got := r.toolText("confirm_plan", map[string]any{"plan": "Rename the module."}, nil)
		if got != `accepted: approve=true comment="ship it"` {
			t.Fatalf("confirm_plan: %s", got)
		}
	})
	t.Run("roots", func(t *testing.T) {
		if got := r.toolText("client_roots", map[string]any{}, nil); !strings.Contains(got, "file:///work/project (project)") {
			t.Fatalf("client_roots: %s", got)
		}
	})
	t.Run("resources", func(t *testing.T) {
		list := r.result("resources/list", map[string]any{})["resources"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["uri"] != "guide://wasmcp/overview" {
			t.Fatalf("resources %v", list)
		}
		contents := r.result("resources/read", map[string]any{"uri": "guide://wasmcp/overview"})["contents"].([]any)
		if text, _ := contents[0].(map[string]any)["text"].(string); !strings.Contains(text, "wasmcp") {
			t.Fatalf("overview %v", contents)
		}
		tmpls := r.result("resources/templates/list", map[string]any{})["resourceTemplates"].([]any)
		if len(tmpls) != 1 {
			t.Fatalf("templates %v", tmpls)
		}
		topic := r.result("resources/read", map[string]any{"uri": "guide://wasmcp/topics/abi"})["contents"].([]any)
		if len(topic) == 0 {
			t.Fatal("no topic contents")
		}
		missing := r.call("resources/read", map[string]any{"uri": "guide://wasmcp/topics/nope"})
		e, _ := missing["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32002) || e["data"].(map[string]any)["uri"] != "guide://wasmcp/topics/nope" {
			t.Fatalf("unknown topic: %v", missing)
		}
	})
	t.Run("prompt and completion", func(t *testing.T) {
		prompts := r.result("prompts/list", map[string]any{})["prompts"].([]any)
		if len(prompts) != 1 || prompts[0].(map[string]any)["name"] != "write_tool" {
			t.Fatalf("prompts %v", prompts)
		}
		got := r.result("prompts/get", map[string]any{"name": "write_tool", "arguments": map[string]any{"language": "go", "purpose": "count words"}})
		msgs, _ := json.Marshal(got["messages"])
		if !strings.Contains(string(msgs), "count words") {
			t.Fatalf("prompt messages %s", msgs)
		}
		comp := r.result("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "write_tool"}, "argument": map[string]any{"name": "language", "value": "g"}})
		vals, _ := json.Marshal(comp["completion"].(map[string]any)["values"])
		if string(vals) != `["go"]` {
			t.Fatalf("completion %s", vals)
		}
	})
	t.Run("bad input keeps the server serving", func(t *testing.T) {
		r.send(`{"jsonrpc":"2.0","id":`)
		r.send(`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"no_such_tool"}}`)
		res := r.call("ping", map[string]any{})
		if _, ok := res["result"]; !ok {
			t.Fatalf("ping after bad input: %v", res)
		}
		unknown := r.call("tools/call", map[string]any{"name": "no_such_tool", "arguments": map[string]any{}})
		if e, _ := unknown["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
			t.Fatalf("unknown tool: %v", unknown)
		}
	})
	r.mu.Lock()
	asked := strings.Join(r.asked, ",")
	r.mu.Unlock()
	if asked != "elicitation/create,roots/list" {
		t.Fatalf("server asked the client %q", asked)
	}
}
