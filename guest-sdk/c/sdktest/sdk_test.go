package sdktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

var (
	cc     string // the C compiler; "" when the machine has none
	tmpDir string
)

func TestMain(m *testing.M) {
	cc, _ = exec.LookPath("cc")
	var err error
	if tmpDir, err = os.MkdirTemp("", "csdk"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(tmpDir)
	os.Exit(code)
}

// compile builds a native program from the SDK and one test source, with
// the sanitizers when the compiler has them.
func compile(src string) (string, error) {
	out := filepath.Join(tmpDir, strings.TrimSuffix(filepath.Base(src), ".c"))
	base := []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-I", "..", "-o", out, src, "../wasmcp.c"}
	san := append([]string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}, base...)
	if _, err := exec.Command(cc, san...).CombinedOutput(); err != nil {
		if b, err := exec.Command(cc, base...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("cc %s: %v\n%s", src, err, b)
		}
	}
	return out, nil
}

func needCC(t *testing.T) {
	if cc == "" {
		t.Skip("no C compiler (cc) on this machine")
	}
}

func TestJSONReaderAndWriter(t *testing.T) {
	needCC(t)
	bin, err := compile("testdata/json_test.c")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), " 0 failed") {
		t.Fatalf("unexpected output:\n%s", out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

var tool struct {
	once sync.Once
	bin  string
	err  error
}

// run feeds stdin to the test tool and returns its stdout lines, decoded,
// and its exit code.
func run(t *testing.T, stdin string) ([]map[string]any, int) {
	t.Helper()
	needCC(t)
	tool.once.Do(func() { tool.bin, tool.err = compile("testdata/tool.c") })
	if tool.err != nil {
		t.Fatal(tool.err)
	}
	cmd := exec.Command(tool.bin)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	var msgs []map[string]any
	for _, line := range strings.Split(stdout.String(), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line is not JSON: %v\n%s", err, line)
		}
		msgs = append(msgs, m)
	}
	if !strings.HasSuffix(stdout.String(), "\n") && stdout.Len() > 0 {
		t.Fatalf("output does not end with a newline: %q", stdout.String())
	}
	return msgs, code
}

func call(tool, args string) string {
	return `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,"_meta":{"progressToken":"tok-1"}}}` + "\n"
}

// only returns the single response of a run.
func only(t *testing.T, stdin string) map[string]any {
	t.Helper()
	msgs, code := run(t, stdin)
	if code != 0 || len(msgs) != 1 {
		t.Fatalf("exit %d, %d messages: %v", code, len(msgs), msgs)
	}
	if msgs[0]["jsonrpc"] != "2.0" {
		t.Fatalf("no jsonrpc 2.0: %v", msgs[0])
	}
	return msgs[0]
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestDescribe(t *testing.T) {
	m := only(t, `{"jsonrpc":"2.0","id":0,"method":"wasmcp/describe","params":{"abiVersions":[1]}}`+"\n")
	if m["id"] != float64(0) {
		t.Fatalf("id %v", m["id"])
	}
	res := m["result"].(map[string]any)
	if res["abiVersion"] != float64(1) || res["name"] != "sdktest" {
		t.Fatalf("description %v", res)
	}
}

func TestEchoEscapes(t *testing.T) {
	text := "quote \" backslash \\ newline \n tab \t nul \x00 é 😀 \u2028 control \x1f"
	args, _ := json.Marshal(map[string]string{"text": text})
	m := only(t, call("echo", string(args)))
	if m["id"] != float64(41) {
		t.Fatalf("id %v", m["id"])
	}
	content := m["result"].(map[string]any)["content"].([]any)
	if got := content[0].(map[string]any)["text"]; got != text {
		t.Fatalf("echo = %q, want %q", got, text)
	}
	// Escaped member names and \u escapes in the request.
	m = only(t, call("echo", `{"\u0074ext":"caf\u00e9 \ud83d\ude00"}`))
	if got := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != "café 😀" {
		t.Fatalf("echo = %q", got)
	}
	// Request members read in one walk: a repeated member counts as its
	// last occurrence (as wasmcp_json_get and Go's encoding/json read it),
	// at both levels, and escaped names match.
	m = only(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","id":7,"m\u0065thod":"tools/call",`+
		`"params":{"name":"nope","arguments":{"text":"first"},"n\u0061me":"echo","arguments":{"text":"last"}}}`)
	if m["id"] != float64(7) {
		t.Fatalf("repeated id: answered %v, want the last (7)", m["id"])
	}
	if got := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != "last" {
		t.Fatalf("repeated name/arguments: echo = %q, want the last arguments", got)
	}
	// A string id is echoed as it was.
	m = only(t, `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	if m["id"] != "abc" {
		t.Fatalf("id %v", m["id"])
	}
}

func TestLongLine(t *testing.T) {
	text := strings.Repeat("abcdefghij", 100000) // 1 MB: the line buffer grows
	args, _ := json.Marshal(map[string]string{"text": text})
	// Bytes after the first newline (a later line) are not read as part of
	// the request.
	m := only(t, call("echo", string(args))+`{"jsonrpc":"2.0","id":99,"result":{}}`+"\n")
	if got := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != text {
		t.Fatalf("echo of 1 MB came back with %d bytes", len(got.(string)))
	}
	// A last line without a newline is read to EOF.
	m = only(t, strings.TrimSuffix(call("echo", `{"text":"eof"}`), "\n"))
	if got := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != "eof" {
		t.Fatalf("echo = %q", got)
	}
}

func TestProgressLogAndStructured(t *testing.T) {
	msgs, code := run(t, call("busy", `{}`))
	if code != 0 || len(msgs) != 5 {
		t.Fatalf("exit %d, messages %v", code, msgs)
	}
	want := []map[string]any{
		{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": "tok-1", "progress": float64(1), "total": float64(2), "message": `half "way"`}},
		{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": "tok-1", "progress": float64(2)}},
		{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "logger": "busy", "data": "line1\nline2"}},
		{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "debug", "data": "no logger"}},
		{"jsonrpc": "2.0", "id": float64(41), "result": map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": `{"n":2,"s":"a b"}`}},
			"structuredContent": map[string]any{"n": float64(2), "s": "a b"}}},
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Fatalf("got  %v\nwant %v", msgs, want)
	}
	// Without a progress token there is no progress, but logs still go.
	msgs, _ = run(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"busy"}}`)
	if len(msgs) != 3 || msgs[0]["method"] != "notifications/message" {
		t.Fatalf("without a token: %v", msgs)
	}
}

func TestAnswers(t *testing.T) {
	m := only(t, call("raw", `{"a":[1,{"b":null}]}`))
	res := m["result"].(map[string]any)
	if !reflect.DeepEqual(res["args"], map[string]any{"a": []any{float64(1), map[string]any{"b": nil}}}) || res["pi"] != 3.14159 {
		t.Fatalf("raw result %v", res)
	}
	if m := only(t, call("echo", `{"text":3}`)); m["result"].(map[string]any)["isError"] != true {
		t.Fatalf("tool error: %v", m)
	}
	m = only(t, call("rpcerror", `{}`))
	if errCode(m) != -32602 || m["error"].(map[string]any)["message"] != `bad "thing"` {
		t.Fatalf("rpc error: %v", m)
	}
	if m := only(t, call("silent", `{}`)); errCode(m) != -32603 || !strings.Contains(m["error"].(map[string]any)["message"].(string), "silent") {
		t.Fatalf("silent tool: %v", m)
	}
	if m := only(t, call("nope\\u0021", `{}`)); errCode(m) != -32602 || m["error"].(map[string]any)["message"] != "Unknown tool: nope!" {
		t.Fatalf("unknown tool: %v", m)
	}
	if m := only(t, call("echo", `[1]`)); errCode(m) != -32602 {
		t.Fatalf("arguments not an object: %v", m)
	}
	// Arguments absent or null: the tool sees an empty object.
	if m := only(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"raw","arguments":null}}`); !reflect.DeepEqual(m["result"].(map[string]any)["args"], map[string]any{}) {
		t.Fatalf("null arguments: %v", m)
	}
	if m := only(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}`); errCode(m) != -32602 {
		t.Fatalf("no name: %v", m)
	}
	if m := only(t, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x"}}`); errCode(m) != -32601 || m["error"].(map[string]any)["message"] != "Method not found: resources/read" {
		t.Fatalf("unknown method: %v", m)
	}
}

func TestBadRequests(t *testing.T) {
	for _, in := range []string{
		"",
		"not json\n",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"` + "\n", // truncated
		`[1,2]` + "\n",
		`{"jsonrpc":"1.0","id":1,"method":"tools/call"}` + "\n",
		`{"jsonrpc":"2.0","method":"tools/call"}` + "\n", // no id: nothing to answer
		`{"jsonrpc":"2.0","id":{},"method":"tools/call"}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":7}` + "\n",
	} {
		msgs, code := run(t, in)
		if code != 1 || len(msgs) != 0 {
			t.Errorf("%q: exit %d, messages %v; want exit 1 and no output", in, code, msgs)
		}
	}
}

func TestHTTP(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":"other","result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"wasmcp-http-1","result":{"status":201,"url":"https://a.test/","headers":{"Content-Type":["x/y"]},"bodyBase64":"AP9iaW4="}}` + "\n"
	msgs, code := run(t, call("fetch", `{"url":"https://a.test/"}`)+answer)
	if code != 0 || len(msgs) != 2 {
		t.Fatalf("exit %d, messages %v", code, msgs)
	}
	want := map[string]any{"jsonrpc": "2.0", "id": "wasmcp-http-1", "method": "wasmcp/http", "params": map[string]any{
		"method": "POST", "url": "https://a.test/", "headers": map[string]any{"X-A": []any{"1"}}, "bodyBase64": "AP9iaW4=", "timeoutMs": float64(1500)}}
	if !reflect.DeepEqual(msgs[0], want) {
		t.Fatalf("request %v", msgs[0])
	}
	if got := msgs[1]["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != "201 x/y 5 255" {
		t.Fatalf("result %q", got)
	}
	// A refusal, and stdin ending before any answer.
	msgs, _ = run(t, call("fetch", `{"url":"https://a.test/"}`)+
		`{"jsonrpc":"2.0","id":"wasmcp-http-1","error":{"code":-32040,"message":"not allowed","data":{"reason":"policy_refused"}}}`+"\n")
	if got := msgs[1]["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != "policy_refused: not allowed" {
		t.Fatalf("refusal %q", got)
	}
	msgs, _ = run(t, call("fetch", `{"url":"https://a.test/"}`))
	if got := msgs[1]["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; !strings.HasPrefix(got.(string), "sdk: ") {
		t.Fatalf("eof %q", got)
	}
}

var server struct {
	once sync.Once
	bin  string
	err  error
}

// serve feeds stdin to the wasmcp_serve test module and returns its
// output lines, decoded.
func serve(t *testing.T, stdin string) []map[string]any {
	t.Helper()
	needCC(t)
	server.once.Do(func() { server.bin, server.err = compile("testdata/server.c") })
	if server.err != nil {
		t.Fatal(server.err)
	}
	cmd := exec.Command(server.bin)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var msgs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line is not JSON: %v\n%s", err, line)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func req(method, params string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + "}\n"
}

// TestClientRequests: requests sent before any answer is read, answers
// arriving in another order (kept for their waiter), error answers, the
// SDK's numbering, state and notifications.
func TestClientRequests(t *testing.T) {
	answers := `{"jsonrpc":"2.0","id":"first","result":{"action":"accept","content":{"n":1}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"ignored/notification"}` + "\n" +
		`{"jsonrpc":"2.0","id":"second","error":{"code":-32000,"message":"no \"thanks\""}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///r"}]}}` + "\n" +
		`{"jsonrpc":"2.0","id":"s","error":{"code":-32021,"message":"no sampling","data":{"requiredCapabilities":{"sampling":{}}}}}` + "\n"
	msgs := serve(t, req("tools/call", `{"name":"two","arguments":{},"_meta":{"wasmcp/state":{"round":0}}}`)+answers)
	want := []string{
		`{"jsonrpc":"2.0","method":"wasmcp/state","params":{"state":{"round":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"t://fixed"}}`,
		`{"jsonrpc":"2.0","id":"first","method":"elicitation/create","params":{"message":"1","requestedSchema":{"type":"object"}}}`,
		`{"jsonrpc":"2.0","id":"second","method":"elicitation/create","params":{"message":"2","requestedSchema":{"type":"object"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{}}`,
		`{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
	}
	if len(msgs) != len(want)+1 {
		t.Fatalf("%d messages: %v", len(msgs), msgs)
	}
	for i, w := range want {
		var wm map[string]any
		json.Unmarshal([]byte(w), &wm)
		if !reflect.DeepEqual(msgs[i], wm) {
			t.Errorf("message %d = %v, want %s", i, msgs[i], w)
		}
	}
	sc := msgs[len(want)]["result"].(map[string]any)["structuredContent"]
	wantSC := map[string]any{"a": map[string]any{"action": "accept", "content": map[string]any{"n": float64(1)}},
		"b": float64(-32000), "bmsg": `no "thanks"`, "roots": map[string]any{"roots": []any{map[string]any{"uri": "file:///r"}}},
		"sample": float64(-32021), "state": map[string]any{"round": float64(0)}}
	if !reflect.DeepEqual(sc, wantSC) {
		t.Fatalf("result %v\nwant   %v", sc, wantSC)
	}

	// An error answer passed on as the call's JSON-RPC error, data and all.
	msgs = serve(t, req("tools/call", `{"name":"two"}`)+
		`{"jsonrpc":"2.0","id":"second","result":{"action":"cancel"}}`+"\n"+
		`{"jsonrpc":"2.0","id":"first","result":{"action":"cancel"}}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"no roots","data":{"requiredCapabilities":{"roots":{}}}}}`+"\n")
	last := msgs[len(msgs)-1]
	if !reflect.DeepEqual(last["error"], map[string]any{"code": float64(-32021), "message": "no roots",
		"data": map[string]any{"requiredCapabilities": map[string]any{"roots": map[string]any{}}}}) {
		t.Fatalf("passed-on error %v", last)
	}

	// Stdin ending before an answer: the request fails, the call is still answered.
	msgs = serve(t, req("tools/call", `{"name":"two"}`))
	if last := msgs[len(msgs)-1]; errCode(last) != -32603 || !strings.Contains(last["error"].(map[string]any)["message"].(string), "stdin closed") {
		t.Fatalf("after EOF: %v", last)
	}
}

func TestResources(t *testing.T) {
	m := serve(t, req("resources/read", `{"uri":"t://fixed"}`))[0]
	if !reflect.DeepEqual(m["result"], map[string]any{"contents": []any{map[string]any{"uri": "t://fixed", "mimeType": "text/plain", "text": `fixed "text"`}}}) {
		t.Fatalf("fixed: %v", m)
	}
	// A template: variables percent-decoded, matched with backtracking.
	m = serve(t, req("resources/read", `{"uri":"t://a%20b.c.d"}`))[0]
	c := m["result"].(map[string]any)["contents"].([]any)[0].(map[string]any)
	blob, _ := base64.StdEncoding.DecodeString(c["blob"].(string))
	if c["uri"] != "t://a%20b.c.d" || c["mimeType"] != "application/json" || string(blob) != `{"a":"a b.c","b":"d"}` {
		t.Fatalf("template: %v (%s)", c, blob)
	}
	m = serve(t, req("resources/read", `{"uri":"t://none.x"}`))[0]
	if errCode(m) != -32602 || m["error"].(map[string]any)["data"].(map[string]any)["uri"] != "t://none.x" {
		t.Fatalf("handler's not found: %v", m)
	}
	for _, uri := range []string{"t://nodot", "t://a/b.c", "t://fixed2", "t://.x"} {
		m = serve(t, req("resources/read", `{"uri":"`+uri+`"}`))[0]
		if errCode(m) != -32602 || m["error"].(map[string]any)["data"].(map[string]any)["uri"] != uri {
			t.Errorf("%s: %v", uri, m)
		}
	}
	if m := serve(t, req("resources/read", `{"uri":7}`))[0]; errCode(m) != -32602 {
		t.Errorf("uri not a string: %v", m)
	}
}

func TestPromptsAndCompletions(t *testing.T) {
	m := serve(t, req("prompts/get", `{"name":"p","arguments":{"x":"hi \"there\""}}`))[0]
	want := map[string]any{"description": `a "prompt"`, "messages": []any{map[string]any{"role": "assistant",
		"content": map[string]any{"type": "text", "text": `hi "there"`}}}}
	if !reflect.DeepEqual(m["result"], want) {
		t.Fatalf("prompt: %v", m)
	}
	for _, params := range []string{`{"name":"p"}`, `{"name":"p","arguments":{"x":""}}`, `{"name":"p","arguments":{"y":"only"}}`,
		`{"name":"p","arguments":{"x":1}}`, `{"name":"q","arguments":{"x":"1"}}`, `{"name":"p","arguments":[]}`} {
		if m := serve(t, req("prompts/get", params))[0]; errCode(m) != -32602 {
			t.Errorf("%s: %v", params, m)
		}
	}
	m = serve(t, req("completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"x","value":"h\u00e9"}}`))[0]
	if !reflect.DeepEqual(m["result"], map[string]any{"completion": map[string]any{"values": []any{"x", "hé"}, "total": float64(2), "hasMore": false}}) {
		t.Fatalf("completion: %v", m)
	}
	m = serve(t, req("completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"many","value":""}}`))[0]
	comp := m["result"].(map[string]any)["completion"].(map[string]any)
	if len(comp["values"].([]any)) != 100 || comp["total"] != float64(150) || comp["hasMore"] != true {
		t.Fatalf("150 values: %v", comp)
	}
	m = serve(t, req("completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"none","value":""}}`))[0]
	if !reflect.DeepEqual(m["result"], map[string]any{"completion": map[string]any{"values": []any{}, "total": float64(0), "hasMore": false}}) {
		t.Fatalf("no answer: %v", m)
	}
	if m := serve(t, req("completion/complete", `{"argument":{"name":"x"}}`))[0]; errCode(m) != -32602 {
		t.Fatalf("no ref: %v", m)
	}
}
