package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSDKReferenceSets builds the reference tool set of the C and the
// AssemblyScript guest SDKs with their examples/reference/<lang>/build.sh
// and drives each through wasmcp serve over stdio, checking every SDK
// feature the set uses: declared input and output schemas, text and
// structured results, progress notifications, an elicitation answered by
// the client (accept, decline, an error), a resource and a prompt. (The
// shared suite in reference_test.go runs every SDK's set the same way for
// all of them; this test is the C and AssemblyScript SDKs' own.) A build
// script that exits 3 says its toolchain is missing: the subtest is
// skipped; any other failure fails it.
func TestSDKReferenceSets(t *testing.T) {
	for _, lang := range []string{"c", "assemblyscript"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			dir := sdkrefBuild(t, lang)
			s := startServe(t, "--tools", dir, "--cache-dir", compileCache, "--watch=false", "--timeout", "60s")
			c := newSDKRefClient(t, s)
			sdkrefCheckSet(t, c)
			sdkrefCheckRoundTrips(t, newModernLines(t, startServe(t, "--tools", dir, "--cache-dir", compileCache, "--watch=false", "--timeout", "60s")))
		})
	}
}

// sdkrefBuild runs examples/reference/<lang>/build.sh into a fresh
// tools directory and returns it.
func sdkrefBuild(t *testing.T, lang string) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("..", "examples", "reference", lang, "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, script, dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("the %s toolchain is missing: %s", lang, strings.TrimSpace(string(out)))
	}
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", script, dir, err, out)
	}
	if fi, err := os.Stat(filepath.Join(dir, "reference.wasm")); err != nil || fi.Size() == 0 {
		t.Fatalf("build.sh wrote no reference.wasm: %v\n%s", err, out)
	}
	return dir
}

// sdkrefClient is a 2025-11-25 stdio client that answers the server's
// elicitation/create requests with the answer set for the next one.
type sdkrefClient struct {
	t      *testing.T
	in     io.Writer
	wmu    sync.Mutex
	next   int
	lines  chan map[string]any
	answer func(params map[string]any) string // the result or error members of the reply
}

func newSDKRefClient(t *testing.T, s *served) *sdkrefClient {
	c := &sdkrefClient{t: t, in: s.Stdin, lines: make(chan map[string]any, 256)}
	go func() {
		sc := bufio.NewScanner(s.Stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("wasmcp wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			c.lines <- m
		}
		close(c.lines)
	}()
	res := c.result("initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "sdkref", "version": "1"}})
	if res["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %v", res)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *sdkrefClient) send(m map[string]any) {
	b, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("writing to wasmcp: %v", err)
	}
}

// call sends a request and returns its response and the notifications that
// came before it; it answers elicitation/create requests on the way.
func (c *sdkrefClient) call(method string, params map[string]any) (map[string]any, []map[string]any) {
	c.t.Helper()
	c.next++
	id := float64(c.next)
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	var notes []map[string]any
	deadline := time.After(90 * time.Second)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("wasmcp's output ended before the answer to %s", method)
			}
			switch {
			case m["method"] == "elicitation/create" && m["id"] != nil:
				if c.answer == nil {
					c.t.Fatalf("unexpected elicitation: %v", m)
				}
				p, _ := m["params"].(map[string]any)
				reply := map[string]any{"jsonrpc": "2.0", "id": m["id"]}
				if err := json.Unmarshal([]byte(c.answer(p)), &reply); err != nil {
					c.t.Fatal(err)
				}
				c.send(reply)
			case m["method"] != nil:
				notes = append(notes, m)
			case m["id"] == id:
				return m, notes
			default:
				c.t.Fatalf("unexpected message while waiting for %s: %v", method, m)
			}
		case <-deadline:
			c.t.Fatalf("no answer to %s %v", method, params)
		}
	}
}

// result is call for a request that must succeed.
func (c *sdkrefClient) result(method string, params map[string]any) map[string]any {
	c.t.Helper()
	m, _ := c.call(method, params)
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %v: %v", method, params, m)
	}
	return res
}

func sdkrefToolCall(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// sdkrefJSON decodes a JSON text written in a test.
func sdkrefJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return v
}

func sdkrefCheckSet(t *testing.T, c *sdkrefClient) {
	// tools/list: names and schemas exactly as COMMON's reference set says.
	tools := map[string]map[string]any{}
	for _, x := range c.result("tools/list", map[string]any{})["tools"].([]any) {
		tool := x.(map[string]any)
		tools[tool["name"].(string)] = tool
	}
	textObj := `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	want := map[string][2]string{
		"echo": {textObj, textObj},
		"sum": {`{"type":"object","properties":{"numbers":{"type":"array","items":{"type":"number"}}},"required":["numbers"]}`,
			`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`},
		"progress": {`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":20}},"required":["steps"]}`, ""},
	}
	for name, w := range want {
		tool := tools[name]
		if tool == nil {
			t.Fatalf("tools/list has no %s: %v", name, tools)
		}
		if !reflect.DeepEqual(tool["inputSchema"], sdkrefJSON(t, w[0])) {
			t.Errorf("%s inputSchema = %v", name, tool["inputSchema"])
		}
		if w[1] != "" && !reflect.DeepEqual(tool["outputSchema"], sdkrefJSON(t, w[1])) {
			t.Errorf("%s outputSchema = %v", name, tool["outputSchema"])
		}
	}
	if tools["ask"] == nil || len(tools) != 4 {
		t.Errorf("tools/list = %v, want echo, sum, progress and ask", tools)
	}

	// echo: text and structured content, escapes intact.
	text := "héllo \"wörld\" \\ \n\t😀 \u2028"
	res := c.result("tools/call", sdkrefToolCall("echo", map[string]any{"text": text}))
	if !reflect.DeepEqual(res["content"], []any{map[string]any{"type": "text", "text": text}}) ||
		!reflect.DeepEqual(res["structuredContent"], map[string]any{"text": text}) || res["isError"] == true {
		t.Errorf("echo = %v", res)
	}

	// sum: integers print as integers, fractions as fractions.
	for _, tc := range []struct {
		numbers []any
		text    string
		sum     float64
	}{
		{[]any{1, 2, 3}, "6", 6},
		{[]any{1, 1.5}, "2.5", 2.5},
		{[]any{}, "0", 0},
		{[]any{-0.25, 1e3}, "999.75", 999.75},
		{[]any{0.1, 0.2}, "0.30000000000000004", 0.30000000000000004},
	} {
		res := c.result("tools/call", sdkrefToolCall("sum", map[string]any{"numbers": tc.numbers}))
		if !reflect.DeepEqual(res["content"], []any{map[string]any{"type": "text", "text": tc.text}}) ||
			!reflect.DeepEqual(res["structuredContent"], map[string]any{"sum": tc.sum}) {
			t.Errorf("sum %v = %v", tc.numbers, res)
		}
	}

	// progress: one notification per step when a token is given, none
	// without.
	m, notes := c.call("tools/call", map[string]any{"name": "progress", "arguments": map[string]any{"steps": 3},
		"_meta": map[string]any{"progressToken": "tok-7"}})
	if got := sdkrefFirstText(m); got != "done 3" {
		t.Errorf("progress = %v", m)
	}
	var steps []string
	for _, n := range notes {
		if n["method"] != "notifications/progress" {
			continue
		}
		p := n["params"].(map[string]any)
		if p["progressToken"] != "tok-7" || p["total"] != float64(3) {
			t.Errorf("progress notification %v", p)
		}
		steps = append(steps, fmt.Sprint(p["progress"]))
	}
	if strings.Join(steps, ",") != "1,2,3" {
		t.Errorf("progress steps %v, notifications %v", steps, notes)
	}
	m, notes = c.call("tools/call", sdkrefToolCall("progress", map[string]any{"steps": 2}))
	if sdkrefFirstText(m) != "done 2" || len(notes) != 0 {
		t.Errorf("progress without a token: %v, notifications %v", m, notes)
	}

	// ask: the elicitation the set sends, and each kind of answer.
	var asked map[string]any
	c.answer = func(p map[string]any) string {
		asked = p
		return `{"result":{"action":"accept","content":{"name":"Ada Lovelace"}}}`
	}
	res = c.result("tools/call", sdkrefToolCall("ask", map[string]any{}))
	if sdkrefFirstText(map[string]any{"result": res}) != "hello Ada Lovelace" {
		t.Errorf("ask (accept) = %v", res)
	}
	wantAsk := sdkrefJSON(t, `{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`)
	if !reflect.DeepEqual(asked, wantAsk) {
		t.Errorf("elicitation params = %v", asked)
	}
	for _, action := range []string{"decline", "cancel"} {
		c.answer = func(map[string]any) string { return `{"result":{"action":"` + action + `"}}` }
		res = c.result("tools/call", sdkrefToolCall("ask", map[string]any{}))
		if sdkrefFirstText(map[string]any{"result": res}) != "no name given" || res["isError"] == true {
			t.Errorf("ask (%s) = %v", action, res)
		}
	}
	c.answer = func(map[string]any) string { return `{"error":{"code":-32000,"message":"the user walked away"}}` }
	res = c.result("tools/call", sdkrefToolCall("ask", map[string]any{}))
	if res["isError"] != true || !strings.Contains(sdkrefFirstText(map[string]any{"result": res}), "the user walked away") {
		t.Errorf("ask (error) = %v", res)
	}
	c.answer = nil

	// The resource and the prompt.
	res = c.result("resources/list", map[string]any{})
	if !reflect.DeepEqual(res["resources"], []any{map[string]any{"uri": "ref://greeting", "name": "greeting", "mimeType": "text/plain"}}) {
		t.Errorf("resources/list = %v", res)
	}
	res = c.result("resources/read", map[string]any{"uri": "ref://greeting"})
	if !reflect.DeepEqual(res["contents"], []any{map[string]any{"uri": "ref://greeting", "mimeType": "text/plain", "text": "hello from the reference tools"}}) {
		t.Errorf("resources/read = %v", res)
	}
	res = c.result("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Grace"}})
	if !reflect.DeepEqual(res["messages"], []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say hello to Grace."}}}) {
		t.Errorf("prompts/get = %v", res)
	}
	if m, _ := c.call("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{}}); m["error"] == nil {
		t.Errorf("prompts/get without its required argument = %v", m)
	}
}

// sdkrefCheckRoundTrips runs ask as a 2026-07-28 client does: the first
// call ends input_required with the set's elicitation, the retry with the
// answer runs the module again from the start and completes; a client
// without the elicitation capability gets the set's error result at once.
func sdkrefCheckRoundTrips(t *testing.T, c *modernLines) {
	const ask = `"name":"ask","arguments":{}`
	r1 := resultOf(t, c.call("1", "tools/call", everyCap, ask))
	reqs, _ := r1["inputRequests"].(map[string]any)
	if r1["resultType"] != "input_required" || len(reqs) != 1 {
		t.Fatalf("round 1: %v", r1)
	}
	var key string
	for k := range reqs {
		key = k
	}
	q := reqs[key].(map[string]any)
	if q["method"] != "elicitation/create" || q["params"].(map[string]any)["message"] != "What is your name?" {
		t.Fatalf("round 1 asks %v", q)
	}
	r2 := resultOf(t, c.call("2", "tools/call", everyCap, ask+`,"requestState":`+strconv.Quote(r1["requestState"].(string))+
		`,"inputResponses":{`+strconv.Quote(key)+`:{"action":"accept","content":{"name":"Ada"}}}`))
	if r2["resultType"] != "complete" || sdkrefFirstText(map[string]any{"result": r2}) != "hello Ada" {
		t.Fatalf("round 2: %v", r2)
	}
	r3 := resultOf(t, c.call("3", "tools/call", `{}`, ask))
	if r3["isError"] != true || sdkrefFirstText(map[string]any{"result": r3}) == "" {
		t.Fatalf("without the capability: %v", r3)
	}
}

// sdkrefFirstText returns the text of the first content block of a response's
// result.
func sdkrefFirstText(m map[string]any) string {
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	block, _ := content[0].(map[string]any)
	s, _ := block["text"].(string)
	return s
}

// TestAssemblyScriptSDK runs the AssemblyScript SDK's own unit tests
// (guest-sdk/assemblyscript/tests: the JSON reader and writer and the URI
// template matcher) with its test.sh, which compiles them with the pinned
// asc and runs them under Node's WASI, then drives its test module
// (tests/server.test.ts) with request lines and answers. Skipped when node
// or npm is missing (test.sh exits 3).
func TestAssemblyScriptSDK(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs(filepath.Join("..", "guest-sdk", "assemblyscript", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	out, err := exec.CommandContext(ctx, script, dir).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("node or npm is missing: %s", strings.TrimSpace(string(out)))
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	if !strings.Contains(string(out), " passed, 0 failed") {
		t.Fatalf("unexpected output:\n%s", out)
	}
	sdkrefCheckASNumbers(t, string(out))
	t.Run("server", func(t *testing.T) { sdkrefCheckASServer(t, filepath.Join(dir, "server.test.wasm")) })
}

// sdkrefCheckASNumbers compares the "num BITS TEXT" lines of the AssemblyScript
// tests, the SDK's JSON text for doubles, with encoding/json's. Where the
// SDK computes the digits exactly (1e-6 <= |n| < 1e17, the range of
// fixed notation but the largest numbers) the text must be the same;
// beyond it, it must be a JSON number that reads back as the same double.
func sdkrefCheckASNumbers(t *testing.T, out string) {
	checked, same := 0, 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "num" {
			continue
		}
		bits, err := strconv.ParseUint(f[1], 16, 64)
		if err != nil {
			t.Fatalf("bad line %q", line)
		}
		n := math.Float64frombits(bits)
		want, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if a := math.Abs(n); a >= 1e-6 && a < 1e17 || a == math.Trunc(a) && a <= 1<<53 {
			if f[2] != string(want) {
				t.Errorf("%v: the SDK writes %s, encoding/json %s", n, f[2], want)
			}
			same++
			continue
		}
		var back float64
		if err := json.Unmarshal([]byte(f[2]), &back); err != nil || back != n {
			t.Errorf("%v: the SDK writes %s, which reads back as %v (%v)", n, f[2], back, err)
		}
	}
	if checked < 2000 || same < 1000 {
		t.Fatalf("only %d numbers checked (%d against encoding/json's text)", checked, same)
	}
	t.Logf("%d numbers checked, %d against encoding/json's text", checked, same)
}

// sdkrefASServe runs the AssemblyScript test module under Node's WASI with stdin
// and returns the lines it wrote, decoded.
func sdkrefASServe(t *testing.T, wasm, stdin string) []map[string]any {
	t.Helper()
	in := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(in, []byte(stdin), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--no-warnings", filepath.Join("..", "guest-sdk", "assemblyscript", "tests", "run.mjs"), wasm, in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var msgs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line is not JSON: %v\n%s", err, line)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func sdkrefASReq(method, params string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + "}\n"
}

// sdkrefCheckASServer drives the AssemblyScript SDK's test module: requests to
// the client answered out of order, errors, state and notifications;
// tool, resource, template, prompt and completion answers and errors.
func sdkrefCheckASServer(t *testing.T, wasm string) {
	answers := `{"jsonrpc":"2.0","id":"first","result":{"action":"accept","content":{"n":1}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"ignored/notification"}` + "\n" +
		`not json` + "\n" +
		`{"jsonrpc":"2.0","id":"second","error":{"code":-32000,"message":"no \"thanks\""}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///r"}]}}` + "\n" +
		`{"jsonrpc":"2.0","id":"s","error":{"code":-32021,"message":"no sampling","data":{"requiredCapabilities":{"sampling":{}}}}}` + "\n"
	msgs := sdkrefASServe(t, wasm, sdkrefASReq("tools/call", `{"name":"two","arguments":{},"_meta":{"progressToken":5,"wasmcp/state":{"round":0}}}`)+answers)
	want := []string{
		`{"jsonrpc":"2.0","method":"wasmcp/state","params":{"state":{"round":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"t://fixed"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1,"total":2,"message":"half"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"two","data":"careful"}}`,
		`{"jsonrpc":"2.0","id":"first","method":"elicitation/create","params":{"message":"1","requestedSchema":{"type":"object"}}}`,
		`{"jsonrpc":"2.0","id":"second","method":"elicitation/create","params":{"message":"2","requestedSchema":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{}}`,
		`{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}`,
	}
	if len(msgs) != len(want)+1 {
		t.Fatalf("%d messages: %v", len(msgs), msgs)
	}
	for i, w := range want {
		if !reflect.DeepEqual(msgs[i], sdkrefJSON(t, w)) {
			t.Errorf("message %d = %v, want %s", i, msgs[i], w)
		}
	}
	res := msgs[len(want)]["result"].(map[string]any)
	wantSC := sdkrefJSON(t, `{"a":{"action":"accept","content":{"n":1}},"b":{"code":-32000,"message":"no \"thanks\""},
		"roots":{"roots":[{"uri":"file:///r"}]},"sample":{"code":-32021,"message":"no sampling","data":{"requiredCapabilities":{"sampling":{}}}},
		"state":{"round":0},"action":"accept","content":{"n":1}}`)
	if !reflect.DeepEqual(res["structuredContent"], wantSC) {
		t.Fatalf("result %v", res)
	}
	if content := res["content"].([]any); len(content) != 2 || content[1].(map[string]any)["text"] != "second block" {
		t.Fatalf("content %v", content)
	}

	// A missing capability passed on as the call's JSON-RPC error; stdin
	// ending before an answer.
	msgs = sdkrefASServe(t, wasm, sdkrefASReq("tools/call", `{"name":"two"}`)+
		`{"jsonrpc":"2.0","id":"second","result":{"action":"cancel"}}`+"\n"+
		`{"jsonrpc":"2.0","id":"first","result":{"action":"decline"}}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"no roots","data":{"requiredCapabilities":{"roots":{}}}}}`+"\n")
	if last := msgs[len(msgs)-1]; !reflect.DeepEqual(last["error"], sdkrefJSON(t, `{"code":-32021,"message":"no roots","data":{"requiredCapabilities":{"roots":{}}}}`)) {
		t.Fatalf("passed-on error %v", last)
	}
	msgs = sdkrefASServe(t, wasm, sdkrefASReq("tools/call", `{"name":"two"}`))
	if last := msgs[len(msgs)-1]; !strings.Contains(fmt.Sprint(last["result"]), "stdin closed") {
		t.Fatalf("after EOF: %v", last)
	}

	// Outbound HTTP through the host: the request, a binary and a text
	// answer, a refusal.
	fetch := sdkrefASReq("tools/call", `{"name":"fetch","arguments":{"url":"https://a.test/"}}`)
	msgs = sdkrefASServe(t, wasm, fetch+`{"jsonrpc":"2.0","id":1,"result":{"status":201,"url":"https://a.test/x","headers":{"Content-Type":["x/y"]},"bodyBase64":"AP9iaW4="}}`+"\n")
	if len(msgs) != 2 || !reflect.DeepEqual(msgs[0], sdkrefJSON(t, `{"jsonrpc":"2.0","id":1,"method":"wasmcp/http","params":{"method":"POST",
		"url":"https://a.test/","headers":{"X-A":["1"]},"bodyBase64":"AP9iaW4=","timeoutMs":1500}}`)) {
		t.Fatalf("http request: %v", msgs)
	}
	if got := sdkrefFirstText(msgs[1]); got != "201 x/y 5 255 https://a.test/x" {
		t.Fatalf("http answer: %v", msgs[1])
	}
	msgs = sdkrefASServe(t, wasm, fetch+`{"jsonrpc":"2.0","id":1,"result":{"status":200,"url":"https://a.test/","headers":{},"body":"h\u00e9llo"}}`+"\n")
	if content := msgs[1]["result"].(map[string]any)["content"].([]any); content[1].(map[string]any)["text"] != "héllo" {
		t.Fatalf("http text answer: %v", msgs[1])
	}
	msgs = sdkrefASServe(t, wasm, fetch+`{"jsonrpc":"2.0","id":1,"error":{"code":-32040,"message":"not allowed","data":{"reason":"policy_refused"}}}`+"\n")
	if got := sdkrefFirstText(msgs[1]); got != "policy_refused: not allowed" || msgs[1]["result"].(map[string]any)["isError"] != true {
		t.Fatalf("http refusal: %v", msgs[1])
	}

	for _, tc := range []struct{ method, params, want string }{
		{"tools/call", `{"name":"fail"}`, `{"result":{"content":[{"type":"text","text":"it failed"}],"isError":true}}`},
		{"tools/call", `{"name":"fail","arguments":{"rpc":true}}`, `{"error":{"code":-32602,"message":"bad \"thing\"","data":{"n":1}}}`},
		{"tools/call", `{"name":"nope"}`, `{"error":{"code":-32602,"message":"unknown tool: nope","data":{"name":"nope"}}}`},
		{"resources/read", `{"uri":"t://fixed"}`, `{"result":{"contents":[{"text":"fixed \"text\"","uri":"t://fixed","mimeType":"text/plain"}]}}`},
		{"resources/read", `{"uri":"t://a%20b.c.d"}`, `{"result":{"contents":[{"text":"{\"a\":\"a b.c\",\"b\":\"d\"}","mimeType":"application/json","uri":"t://a%20b.c.d"}]}}`},
		{"resources/read", `{"uri":"t://none.x"}`, `{"error":{"code":-32602,"message":"resource not found: t://none.x","data":{"uri":"t://none.x"}}}`},
		{"resources/read", `{"uri":"t://a/b.c"}`, `{"error":{"code":-32602,"message":"resource not found: t://a/b.c","data":{"uri":"t://a/b.c"}}}`},
		{"prompts/get", `{"name":"p","arguments":{"x":"hi \"there\"","y":"u"}}`, `{"result":{"description":"A prompt.","messages":[
			{"role":"assistant","content":{"type":"text","text":"hi \"there\""}},{"role":"user","content":{"type":"text","text":"u"}}]}}`},
		{"prompts/get", `{"name":"p","arguments":{"y":"u"}}`, `{"error":{"code":-32602,"message":"prompt p: missing required argument \"x\"","data":{"argument":"x"}}}`},
		{"prompts/get", `{"name":"p","arguments":{"x":1}}`, `{"error":{"code":-32602,"message":"prompt arguments must be strings"}}`},
		{"prompts/get", `{"name":"q"}`, `{"error":{"code":-32602,"message":"unknown prompt: q","data":{"name":"q"}}}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"x","value":"h\u00e9"}}`,
			`{"result":{"completion":{"values":["ref/prompt","x","hé"],"total":3,"hasMore":false}}}`},
		{"wasmcp/describe", `{"abiVersions":[2]}`, `{"error":{"code":-32602,"message":"module servertest speaks wasmcp ABI v1; the host speaks [2]","data":{"abiVersion":1}}}`},
		{"ping", `{}`, `{"error":{"code":-32601,"message":"method not found: ping"}}`},
	} {
		msgs := sdkrefASServe(t, wasm, sdkrefASReq(tc.method, tc.params))
		w := sdkrefJSON(t, tc.want).(map[string]any)
		w["jsonrpc"], w["id"] = "2.0", float64(7)
		if len(msgs) != 1 || !reflect.DeepEqual(msgs[0], w) {
			t.Errorf("%s %s:\n got  %v\n want %v", tc.method, tc.params, msgs, w)
		}
	}
	msgs = sdkrefASServe(t, wasm, sdkrefASReq("completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"many","value":""}}`))
	comp := msgs[0]["result"].(map[string]any)["completion"].(map[string]any)
	if len(comp["values"].([]any)) != 100 || comp["total"] != float64(150) || comp["hasMore"] != true {
		t.Fatalf("150 values: %v", comp)
	}
	// A request line that is not JSON-RPC gets no answer.
	for _, in := range []string{"not json\n", `{"jsonrpc":"2.0","method":"tools/call"}` + "\n", `[1]` + "\n"} {
		path := filepath.Join(t.TempDir(), "in")
		os.WriteFile(path, []byte(in), 0o600)
		out, err := exec.Command("node", "--no-warnings", filepath.Join("..", "guest-sdk", "assemblyscript", "tests", "run.mjs"), wasm, path).Output()
		if err != nil || len(out) != 0 {
			t.Errorf("%q: %v, output %q", in, err, out)
		}
	}
}
