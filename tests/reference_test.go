package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// The reference tool set (examples/reference/<lang>, described in
// docs/writing-tools.md, "The reference tool set") is written once per
// guest SDK. This suite builds every one present with its build.sh, runs `wasmcp check` on
// it, then serves it over stdio and over Streamable HTTP and asserts the
// same surface: names, schemas, texts, progress, elicitation both ways,
// the resource and the prompt. A build.sh that exits 3 lacks its
// toolchain: the language is skipped, except in CI (env CI set), where
// that is a failure.

// refSchemas are the tools' schemas every implementation declares.
var refSchemas = map[string][2]string{
	"echo": {`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`},
	"sum": {`{"type":"object","properties":{"numbers":{"type":"array","items":{"type":"number"}}},"required":["numbers"]}`,
		`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`},
	"progress": {`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":20}},"required":["steps"]}`, ``},
	"ask":      {``, ``}, // input: any object schema; no output schema
}

func TestReferenceToolSets(t *testing.T) {
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob(filepath.Join(root, "examples", "reference", "*", "build.sh"))
	if len(scripts) == 0 {
		t.Fatal("no examples/reference/*/build.sh")
	}
	sort.Strings(scripts)
	for _, script := range scripts {
		lang := filepath.Base(filepath.Dir(script))
		t.Run(lang, func(t *testing.T) {
			dir, wasm := buildReference(t, script)
			t.Run("check", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				out, err := exec.CommandContext(ctx, wasmcpBin, "check", "--cache-dir", compileCache, wasm).CombinedOutput()
				if err != nil {
					t.Fatalf("wasmcp check %s: %v\n%s", lang, err, out)
				}
				if !strings.Contains(string(out), "passed:") || strings.Contains(string(out), "FAIL") {
					t.Fatalf("wasmcp check report:\n%s", out)
				}
			})
			t.Run("stdio", func(t *testing.T) {
				// Two sessions: one declaring elicitation, answering it
				// in-band; one without, for the error case.
				s := startServe(t, "--tools", dir, "--cache-dir", compileCache, "--watch=false")
				c := newStdioClientCaps(t, s, `{"elicitation":{}}`)
				s2 := startServe(t, "--tools", dir, "--cache-dir", compileCache, "--watch=false")
				plain := newStdioClient(t, s2)
				assertReference(t, c, plain, func(answer string) map[string]any { return stdioAsk(t, c, `"result":`+answer) })
				// The client's own error answer reaches the tool's result.
				r := resultOf(t, stdioAsk(t, c, `"error":{"code":-1,"message":"the user closed the dialog"}`))
				if r["isError"] != true || firstText(t, r) != "the user closed the dialog" {
					t.Errorf("ask answered with an error: %v, want isError with the error's message", r)
				}
			})
			t.Run("http", func(t *testing.T) {
				s := startServe(t, "--tools", dir, "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false")
				c := &httpClient{t: t, url: s.URL, ch: make(chan string, 1)}
				// c.request declares no capability; httpAsk declares
				// elicitation.
				assertReference(t, c, c, func(answer string) map[string]any { return httpAsk(t, c, answer) })
			})
		})
	}
}

// referenceFiles are the files a build.sh may write, a module or a script.
var referenceFiles = []string{"reference.wasm", "reference.js", "reference.ts"}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// buildReference runs build.sh into a fresh directory and returns it and
// the module file (or script) it wrote.
func buildReference(t *testing.T, script string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", script, dir)
	cmd.Dir = filepath.Dir(script)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: toolchain missing in CI: %s", script, out)
		}
		t.Skipf("%s: toolchain missing (exit 3): %s", script, strings.TrimSpace(string(out)))
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	for _, f := range referenceFiles {
		if p := filepath.Join(dir, f); fileExists(p) {
			return dir, p
		}
	}
	t.Fatalf("%s exited 0 but wrote none of %v\n%s", script, referenceFiles, out)
	return "", ""
}

// assertReference drives the reference surface through c; plain is a
// client that declared no elicitation capability (it may be c); ask runs
// the ask tool with the client answering elicitation/create with answer (a
// result object) and returns the final JSON-RPC response.
func assertReference(t *testing.T, c, plain mcpClient, ask func(answer string) map[string]any) {
	// tools/list: the four tools with their schemas.
	list := resultOf(t, decode(t, c.request("tools/list", `{}`, nil)))
	tools, _ := list["tools"].([]any)
	got := map[string]map[string]any{}
	for _, x := range tools {
		tool := x.(map[string]any)
		got[tool["name"].(string)] = tool
	}
	if len(got) != len(refSchemas) {
		t.Errorf("tools/list has %d tools, want %d: %v", len(got), len(refSchemas), keys(got))
	}
	for name, sch := range refSchemas {
		tool, ok := got[name]
		if !ok {
			t.Errorf("tools/list has no %s", name)
			continue
		}
		if sch[0] != "" {
			sameJSON(t, name+" inputSchema", tool["inputSchema"], sch[0])
		} else if in, _ := tool["inputSchema"].(map[string]any); in["type"] != "object" {
			t.Errorf("%s inputSchema %v is not an object schema", name, tool["inputSchema"])
		}
		if sch[1] != "" {
			sameJSON(t, name+" outputSchema", tool["outputSchema"], sch[1])
		} else if tool["outputSchema"] != nil {
			t.Errorf("%s has an outputSchema: %v", name, tool["outputSchema"])
		}
	}

	// echo and sum: text content and structuredContent.
	echo := callResult(t, c, "echo", `{"text":"hi there"}`, nil)
	sameJSON(t, "echo result", map[string]any{"content": echo["content"], "structuredContent": echo["structuredContent"]},
		`{"content":[{"type":"text","text":"hi there"}],"structuredContent":{"text":"hi there"}}`)
	for args, want := range map[string]string{
		`{"numbers":[1,2,3]}`: `{"content":[{"type":"text","text":"6"}],"structuredContent":{"sum":6}}`,
		`{"numbers":[1,1.5]}`: `{"content":[{"type":"text","text":"2.5"}],"structuredContent":{"sum":2.5}}`,
		`{"numbers":[]}`:      `{"content":[{"type":"text","text":"0"}],"structuredContent":{"sum":0}}`,
	} {
		sum := callResult(t, c, "sum", args, nil)
		sameJSON(t, "sum "+args, map[string]any{"content": sum["content"], "structuredContent": sum["structuredContent"]}, want)
	}

	// progress with a token: steps notifications, 1..steps of steps.
	var notes []map[string]any
	prog := callResult(t, c, "progress", `{"steps":3}`, func(msg string) {
		var m struct {
			Params map[string]any `json:"params"`
		}
		_ = json.Unmarshal([]byte(msg), &m)
		notes = append(notes, m.Params)
	})
	if text := firstText(t, prog); text != "done 3" {
		t.Errorf("progress answered %q, want \"done 3\"", text)
	}
	if len(notes) != 3 {
		t.Errorf("progress sent %d notifications, want 3: %v", len(notes), notes)
	}
	for i, n := range notes {
		if n["progress"] != float64(i+1) || n["total"] != float64(3) {
			t.Errorf("progress notification %d: %v, want progress %d of 3", i+1, n, i+1)
		}
	}
	// progress without a token: no notification, same answer.
	if text := firstText(t, callResult(t, c, "progress", `{"steps":2}`, nil)); text != "done 2" {
		t.Errorf("progress answered %q, want \"done 2\"", text)
	}

	// ask: accept greets, decline gives up.
	if text := firstText(t, resultOf(t, ask(`{"action":"accept","content":{"name":"Ada"}}`))); text != "hello Ada" {
		t.Errorf("ask (accept Ada) answered %q, want \"hello Ada\"", text)
	}
	if text := firstText(t, resultOf(t, ask(`{"action":"decline"}`))); text != "no name given" {
		t.Errorf("ask (decline) answered %q, want \"no name given\"", text)
	}
	if text := firstText(t, resultOf(t, ask(`{"action":"cancel"}`))); text != "no name given" {
		t.Errorf("ask (cancel) answered %q, want \"no name given\"", text)
	}
	// An error answer is a tool error with the error's message: a client
	// without the elicitation capability gets the guest the host's -32021.
	noCap := resultOf(t, decode(t, plain.request("tools/call", `{"name":"ask","arguments":{}}`, nil)))
	if want := "The client did not declare the elicitation capability"; noCap["isError"] != true || firstText(t, noCap) != want {
		t.Errorf("ask without elicitation: %v, want isError with %q", noCap, want)
	}

	// The resource and the prompt.
	res := resultOf(t, decode(t, c.request("resources/list", `{}`, nil)))
	sameJSON(t, "resources/list", res["resources"], `[{"uri":"ref://greeting","name":"greeting","mimeType":"text/plain"}]`)
	read := resultOf(t, decode(t, c.request("resources/read", `{"uri":"ref://greeting"}`, nil)))
	contents, _ := read["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("resources/read: %v", read)
	}
	rc := contents[0].(map[string]any)
	if rc["uri"] != "ref://greeting" || rc["text"] != "hello from the reference tools" || (rc["mimeType"] != nil && rc["mimeType"] != "text/plain") {
		t.Errorf("resources/read ref://greeting: %v", rc)
	}
	prompts := resultOf(t, decode(t, c.request("prompts/list", `{}`, nil)))
	sameJSON(t, "prompts/list arguments", promptArgs(prompts), `[{"name":"name","required":true}]`)
	p := resultOf(t, decode(t, c.request("prompts/get", `{"name":"greet","arguments":{"name":"Ada"}}`, nil)))
	sameJSON(t, "prompts/get greet", p["messages"], `[{"role":"user","content":{"type":"text","text":"Say hello to Ada."}}]`)
}

// callResult calls a tool and returns its CallToolResult, failing on an
// error or a tool error.
func callResult(t *testing.T, c mcpClient, name, args string, progress func(string)) map[string]any {
	t.Helper()
	r := resultOf(t, decode(t, c.request("tools/call", `{"name":"`+name+`","arguments":`+args+`}`, progress)))
	if r["isError"] == true {
		t.Fatalf("%s %s: tool error %v", name, args, r["content"])
	}
	return r
}

// promptArgs is the greet prompt's arguments, each reduced to its name
// and required flag.
func promptArgs(list map[string]any) []map[string]any {
	prompts, _ := list["prompts"].([]any)
	for _, x := range prompts {
		p := x.(map[string]any)
		if p["name"] != "greet" {
			continue
		}
		var out []map[string]any
		args, _ := p["arguments"].([]any)
		for _, a := range args {
			am := a.(map[string]any)
			out = append(out, map[string]any{"name": am["name"], "required": am["required"]})
		}
		return out
	}
	return nil
}

// stdioAsk calls ask over a 2025-11-25 stdio session and answers the
// server's elicitation/create request with answer, the response's
// "result": … or "error": … member.
func stdioAsk(t *testing.T, c *stdioClient, answer string) map[string]any {
	t.Helper()
	done := make(chan string, 1)
	go func() { done <- c.request("tools/call", `{"name":"ask","arguments":{}}`, nil) }()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case msg := <-c.notes():
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params map[string]any  `json:"params"`
			}
			_ = json.Unmarshal([]byte(msg), &m)
			if m.Method != "elicitation/create" {
				continue
			}
			checkElicitation(t, m.Params)
			c.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + answer + `}`)
		case resp := <-done:
			return decode(t, resp)
		case <-deadline:
			t.Fatal("ask: no answer within 60s")
		}
	}
}

// httpAsk calls ask as a 2026-07-28 client declaring elicitation: the
// first answer is input_required with the elicitation, the retry carries
// the client's answer under the request's key.
func httpAsk(t *testing.T, c *httpClient, answer string) map[string]any {
	t.Helper()
	first := resultOf(t, httpCallCaps(t, c, `{"name":"ask","arguments":{}}`))
	if first["resultType"] != "input_required" {
		t.Fatalf("ask: %v, want input_required", first)
	}
	reqs, _ := first["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("ask: inputRequests %v, want one", reqs)
	}
	var key string
	for k, v := range reqs {
		key = k
		r := v.(map[string]any)
		if r["method"] != "elicitation/create" {
			t.Fatalf("ask: input request %v is not elicitation/create", r)
		}
		params, _ := r["params"].(map[string]any)
		checkElicitation(t, params)
	}
	state, _ := json.Marshal(first["requestState"])
	k, _ := json.Marshal(key)
	return httpCallCaps(t, c, `{"name":"ask","arguments":{},"requestState":`+string(state)+`,"inputResponses":{`+string(k)+`:`+answer+`}}`)
}

// httpCallCaps posts a tools/call declaring the elicitation capability and
// returns the JSON-RPC response.
func httpCallCaps(t *testing.T, c *httpClient, params string) map[string]any {
	t.Helper()
	id := c.next.Add(1)
	meta := `{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, withMeta(params, meta))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := c.post(ctx, "tools/call", "ask", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return decode(t, string(b))
	}
	var final string
	readSSE(resp.Body, func(data string) bool {
		if strings.Contains(data, fmt.Sprintf(`"id":%d`, id)) {
			final = data
			return false
		}
		return true
	})
	return decode(t, final)
}

// checkElicitation checks the params of ask's elicitation/create.
func checkElicitation(t *testing.T, params map[string]any) {
	t.Helper()
	if params["message"] != "What is your name?" {
		t.Errorf("elicitation message %v", params["message"])
	}
	sameJSON(t, "requestedSchema", params["requestedSchema"], `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
}

// decode parses a JSON-RPC response.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("response %q: %v", s, err)
	}
	return m
}

// sameJSON compares a decoded value with JSON text, as JSON values.
func sameJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	gb, _ := json.Marshal(got)
	var g any
	_ = json.Unmarshal(gb, &g)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, gb, want)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
