package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// serve runs s on the input lines and returns the output lines, decoded.
func serve(t *testing.T, s *Server, lines ...string) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := s.Serve(strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return decodeLines(t, out.String())
}

func decodeLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	if text != "" && !strings.HasSuffix(text, "\n") {
		t.Errorf("output does not end in a newline: %q", text)
	}
	var msgs []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func call(id int, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func toolCall(name, args string) string {
	return call(1, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args))
}

// last returns the final message, which must be the response.
func last(t *testing.T, msgs []map[string]any) map[string]any {
	t.Helper()
	if len(msgs) == 0 {
		t.Fatal("no output")
	}
	return msgs[len(msgs)-1]
}

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return int(e["code"].(float64))
}

func resultOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", m)
	}
	return r
}

// toolText returns the first text content and isError of a tool result.
func toolText(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	r := resultOf(t, m)
	content := r["content"].([]any)
	if len(content) == 0 {
		return "", r["isError"] == true
	}
	return content[0].(map[string]any)["text"].(string), r["isError"] == true
}

type greetIn struct {
	Name  string `json:"name"`
	Times int    `json:"times,omitempty"`
}

type greetOut struct {
	Greeting string   `json:"greeting"`
	Extra    []string `json:"extra"`
}

func newTestServer() *Server {
	s := New("test", "1.2.3", WithInstructions("Use carefully."))
	AddTool(s, Tool{Name: "greet", Description: "Greets.", TaskSupport: "optional"},
		func(c *Context, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "hi " + in.Name}, nil
		})
	AddTool(s, Tool{Name: "fail", Description: "Fails."}, func(c *Context, in struct{}) (string, error) {
		return "", errors.New("it broke")
	})
	AddTool(s, Tool{Name: "boom", Description: "Panics."}, func(c *Context, in struct{}) (string, error) {
		panic("kaboom")
	})
	s.AddRawTool(Tool{Name: "raw", Description: "Echoes its arguments."}, func(c *Context, args json.RawMessage) (*ToolResult, error) {
		return &ToolResult{Content: []Content{Text(string(args)), Image([]byte{1, 2}, "image/png")}}, nil
	})
	s.AddResource(Resource{URI: "x://fixed/data", Name: "fixed", MimeType: "text/plain"},
		func(c *Context, uri string) ([]ResourceContents, error) {
			return []ResourceContents{{Text: "fixed"}}, nil
		})
	s.AddResource(Resource{URI: "x://panic", Name: "panic"},
		func(c *Context, uri string) ([]ResourceContents, error) { panic("resource panic") })
	s.AddResource(Resource{URI: "x://err", Name: "err"},
		func(c *Context, uri string) ([]ResourceContents, error) { return nil, errors.New("disk on fire") })
	s.AddResourceTemplate(ResourceTemplate{URITemplate: "x://{id}/data", Name: "data", MimeType: "application/json"},
		func(c *Context, uri string, vars map[string]string) ([]ResourceContents, error) {
			return []ResourceContents{{Text: `{"id":"` + vars["id"] + `"}`}, {URI: uri + "#bin", MimeType: "application/octet-stream", Blob: []byte("\x00\x01")}}, nil
		})
	s.AddPrompt(Prompt{Name: "p", Description: "A prompt.", Arguments: []PromptArgument{{Name: "a", Required: true}, {Name: "b"}}},
		func(c *Context, args map[string]string) (*PromptResult, error) {
			if args["b"] == "panic" {
				panic("prompt panic")
			}
			return &PromptResult{Messages: []PromptMessage{UserMessage(args["a"] + args["b"])}}, nil
		})
	s.AddCompletion(PromptRef("p"), "a", func(c *Context, value string, ctx map[string]string) ([]string, error) {
		if value == "err" {
			return nil, errors.New("no completions today")
		}
		var v []string
		for i := range 150 {
			v = append(v, fmt.Sprintf("%s%d", value, i))
		}
		return v, nil
	})
	s.AddCompletion(TemplateRef("x://{id}/data"), "id", func(c *Context, value string, ctx map[string]string) ([]string, error) {
		return FilterPrefix([]string{"Alpha", "alps", "beta"}, value), nil
	})
	return s
}

func TestDescribe(t *testing.T) {
	s := newTestServer()
	m := last(t, serve(t, s, call(0, "wasmcp/describe", `{"abiVersions":[1,2]}`)))
	r := resultOf(t, m)
	if r["abiVersion"] != 1.0 || r["name"] != "test" || r["version"] != "1.2.3" || r["instructions"] != "Use carefully." || r["completions"] != true {
		t.Errorf("description header: %v", r)
	}
	tools := r["tools"].([]any)
	if len(tools) != 4 {
		t.Fatalf("tools: %v", tools)
	}
	greet := tools[0].(map[string]any)
	if greet["name"] != "greet" || greet["outputSchema"] == nil || greet["execution"].(map[string]any)["taskSupport"] != "optional" {
		t.Errorf("greet: %v", greet)
	}
	in := greet["inputSchema"].(map[string]any)
	if fmt.Sprint(in["required"]) != "[name]" {
		t.Errorf("greet input schema: %v", in)
	}
	if tools[1].(map[string]any)["outputSchema"] != nil {
		t.Errorf("a string tool has an output schema: %v", tools[1])
	}
	if got := fmt.Sprint(tools[3].(map[string]any)["inputSchema"]); got != "map[type:object]" {
		t.Errorf("raw tool input schema %s", got)
	}
	if len(r["resources"].([]any)) != 3 || len(r["resourceTemplates"].([]any)) != 1 || len(r["prompts"].([]any)) != 1 {
		t.Errorf("description lists: %v", r)
	}

	// No versions listed: assume 1. A host without 1: refuse.
	if m := last(t, serve(t, s, `{"jsonrpc":"2.0","id":0,"method":"wasmcp/describe"}`)); m["result"] == nil {
		t.Errorf("describe without params: %v", m)
	}
	m = last(t, serve(t, s, call(0, "wasmcp/describe", `{"abiVersions":[2]}`)))
	if errCode(m) != CodeInvalidParams || !strings.Contains(fmt.Sprint(m["error"]), "speaks wasmcp ABI v1") {
		t.Errorf("version mismatch: %v", m)
	}
}

func TestProtocolErrors(t *testing.T) {
	s := newTestServer()
	cases := []struct {
		line string
		code int
		id   any
	}{
		{`{not json`, CodeParseError, nil},
		{call(5, "tools/list", `{}`), CodeMethodNotFound, 5.0},
		{toolCall("nope", `{}`), CodeInvalidParams, 1.0},
		{`{"jsonrpc":"2.0","id":9}`, CodeInvalidRequest, 9.0},
		{`{"jsonrpc":"2.0","id":"s","method":"tools/call"}`, CodeInvalidParams, "s"},
		{call(2, "tools/call", `[1]`), CodeInvalidParams, 2.0},
	}
	for _, c := range cases {
		m := last(t, serve(t, s, c.line))
		if errCode(m) != c.code || m["id"] != c.id {
			t.Errorf("%s: got %v, want code %d id %v", c.line, m, c.code, c.id)
		}
	}
	// A notification gets no answer.
	if msgs := serve(t, s, `{"jsonrpc":"2.0","method":"notifications/cancelled"}`); len(msgs) != 0 {
		t.Errorf("notification answered: %v", msgs)
	}
	// Blank lines before the request are skipped.
	if m := last(t, serve(t, s, "", "  ", toolCall("greet", `{"name":"x"}`))); m["result"] == nil {
		t.Errorf("after blank lines: %v", m)
	}
	// No request at all is an error for Run to report.
	if err := s.Serve(strings.NewReader(""), io.Discard); err == nil {
		t.Error("Serve on empty input: no error")
	}
	// A request without a final newline is still served.
	var out bytes.Buffer
	if err := s.Serve(strings.NewReader(toolCall("greet", `{"name":"x"}`)), &out); err != nil || !strings.HasSuffix(out.String(), "}\n") {
		t.Errorf("unterminated request: %v %q", err, out.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

func TestServeWriteError(t *testing.T) {
	err := newTestServer().Serve(strings.NewReader(toolCall("greet", `{"name":"x"}`)), failWriter{})
	if err == nil || !strings.Contains(err.Error(), "pipe closed") {
		t.Errorf("err = %v", err)
	}
}

func TestToolCalls(t *testing.T) {
	s := newTestServer()

	m := last(t, serve(t, s, toolCall("greet", `{"name":"Ada"}`)))
	r := resultOf(t, m)
	if sc := r["structuredContent"].(map[string]any); sc["greeting"] != "hi Ada" || sc["extra"] != nil {
		t.Errorf("structuredContent: %v", r)
	}
	if text, isErr := toolText(t, m); isErr || text != `{"greeting":"hi Ada","extra":null}` {
		t.Errorf("text %q isError %v", text, isErr)
	}

	for _, c := range []struct{ args, want string }{
		{`{}`, `missing required property "name"`},
		{`null`, `missing required property "name"`},
		{`{"name":null}`, `missing required property "name"`},
		{`{"name":5}`, `invalid arguments: json: cannot unmarshal number`},
		{`"str"`, `not a JSON object`},
	} {
		text, isErr := toolText(t, last(t, serve(t, s, toolCall("greet", c.args))))
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("greet %s: %q isError %v, want %q", c.args, text, isErr, c.want)
		}
	}

	if text, isErr := toolText(t, last(t, serve(t, s, toolCall("fail", `{}`)))); !isErr || text != "it broke" {
		t.Errorf("fail: %q %v", text, isErr)
	}
	if text, isErr := toolText(t, last(t, serve(t, s, toolCall("boom", `{}`)))); !isErr || text != "tool boom panicked: kaboom" {
		t.Errorf("boom: %q %v", text, isErr)
	}

	// Missing arguments are {} for a raw tool; content blocks pass through.
	m = last(t, serve(t, s, call(1, "tools/call", `{"name":"raw"}`)))
	content := resultOf(t, m)["content"].([]any)
	if content[0].(map[string]any)["text"] != "{}" || content[1].(map[string]any)["data"] != "AQI=" {
		t.Errorf("raw: %v", content)
	}
}

func TestToolOutputKinds(t *testing.T) {
	s := New("kinds", "1")
	AddTool(s, Tool{Name: "result"}, func(c *Context, _ struct{}) (*ToolResult, error) {
		return &ToolResult{Content: []Content{Text("a"), ResourceLink(Resource{URI: "x://y", Name: "y"})}, IsError: true}, nil
	})
	AddTool(s, Tool{Name: "nilresult"}, func(c *Context, _ struct{}) (*ToolResult, error) { return nil, nil })
	AddTool(s, Tool{Name: "slice"}, func(c *Context, _ struct{}) ([]int, error) { return []int{1, 2}, nil })
	AddTool(s, Tool{Name: "map"}, func(c *Context, _ map[string]any) (map[string]int, error) { return nil, nil })
	AddTool(s, Tool{Name: "nilptr"}, func(c *Context, _ struct{}) (*greetOut, error) { return nil, nil })
	type named string
	AddTool(s, Tool{Name: "named"}, func(c *Context, _ struct{}) (named, error) { return "n", nil })
	AddTool(s, Tool{Name: "unencodable"}, func(c *Context, _ struct{}) (*ToolResult, error) {
		return &ToolResult{Content: []Content{}, StructuredContent: func() {}}, nil
	})

	check := func(name, wantJSON string) {
		t.Helper()
		var out bytes.Buffer
		s.Serve(strings.NewReader(toolCall(name, `{}`)), &out)
		var m struct{ Result json.RawMessage }
		json.Unmarshal(out.Bytes(), &m)
		if string(m.Result) != wantJSON {
			t.Errorf("%s:\n got %s\nwant %s", name, m.Result, wantJSON)
		}
	}
	check("result", `{"content":[{"type":"text","text":"a"},{"type":"resource_link","uri":"x://y","name":"y"}],"isError":true}`)
	check("nilresult", `{"content":[]}`)
	check("slice", `{"content":[{"type":"text","text":"[1,2]"}]}`)
	check("map", `{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}`)
	check("nilptr", `{"content":[{"type":"text","text":"the tool returned no result"}],"isError":true}`)
	check("named", `{"content":[{"type":"text","text":"n"}]}`)
	check("unencodable", `{"content":[{"type":"text","text":"cannot encode the tool's result: json: unsupported type: func()"}],"isError":true}`)

	d := s.Description()
	if d.Tools[2].OutputSchema != nil || string(d.Tools[3].OutputSchema) != `{"type":"object","additionalProperties":{"type":"integer"}}` ||
		!strings.HasPrefix(string(d.Tools[4].OutputSchema), `{"type":"object",`) {
		t.Errorf("output schemas: %s | %s | %s", d.Tools[2].OutputSchema, d.Tools[3].OutputSchema, d.Tools[4].OutputSchema)
	}
	if string(d.Tools[3].InputSchema) != `{"type":"object","additionalProperties":{}}` {
		t.Errorf("map input schema: %s", d.Tools[3].InputSchema)
	}
}

func TestSchemaOverrides(t *testing.T) {
	s := New("o", "1")
	AddTool(s, Tool{Name: "t", InputSchema: `{"type":"object", "properties":{"q":{"type":"string"}}}`, OutputSchema: map[string]any{"type": "object"}},
		func(c *Context, in map[string]any) ([]string, error) { return []string{fmt.Sprint(in["q"])}, nil })
	d := s.Description()
	if string(d.Tools[0].InputSchema) != `{"type":"object","properties":{"q":{"type":"string"}}}` || string(d.Tools[0].OutputSchema) != `{"type":"object"}` {
		t.Errorf("schemas: %s %s", d.Tools[0].InputSchema, d.Tools[0].OutputSchema)
	}
	// With an explicit output schema the result is structured.
	m := last(t, serve(t, s, toolCall("t", `{"q":"v"}`)))
	if fmt.Sprint(resultOf(t, m)["structuredContent"]) != "[v]" {
		t.Errorf("result %v", m)
	}
}

func TestRegistrationPanics(t *testing.T) {
	noop := func(c *Context, _ struct{}) (string, error) { return "", nil }
	cases := map[string]func(s *Server){
		"empty name":    func(s *Server) { AddTool(s, Tool{}, noop) },
		"bad name":      func(s *Server) { AddTool(s, Tool{Name: "a b"}, noop) },
		"long name":     func(s *Server) { AddTool(s, Tool{Name: strings.Repeat("a", 129)}, noop) },
		"duplicate":     func(s *Server) { AddTool(s, Tool{Name: "a"}, noop); AddTool(s, Tool{Name: "a"}, noop) },
		"task support":  func(s *Server) { AddTool(s, Tool{Name: "a", TaskSupport: "sometimes"}, noop) },
		"input not obj": func(s *Server) { AddTool(s, Tool{Name: "a", InputSchema: `{"type":"string"}`}, noop) },
		"input not json": func(s *Server) {
			s.AddRawTool(Tool{Name: "a", InputSchema: `{`}, func(*Context, json.RawMessage) (*ToolResult, error) { return nil, nil })
		},
		"input type": func(s *Server) {
			AddTool(s, Tool{Name: "a"}, func(c *Context, _ int) (string, error) { return "", nil })
		},
		"nil handler":     func(s *Server) { AddTool[struct{}, string](s, Tool{Name: "a"}, nil) },
		"template syntax": func(s *Server) { s.AddResourceTemplate(ResourceTemplate{URITemplate: "x://{+a}", Name: "n"}, nil) },
		"template novar": func(s *Server) {
			s.AddResourceTemplate(ResourceTemplate{URITemplate: "x://a", Name: "n"}, func(*Context, string, map[string]string) ([]ResourceContents, error) { return nil, nil })
		},
		"resource name": func(s *Server) { s.AddResource(Resource{URI: "x://a"}, nil) },
		"prompt nil":    func(s *Server) { s.AddPrompt(Prompt{Name: "p"}, nil) },
		"prompt dup": func(s *Server) {
			h := func(*Context, map[string]string) (*PromptResult, error) { return nil, nil }
			s.AddPrompt(Prompt{Name: "p"}, h)
			s.AddPrompt(Prompt{Name: "p"}, h)
		},
		"completion ref": func(s *Server) { s.AddCompletion(CompletionRef{Type: "ref/x"}, "a", nil) },
	}
	for name, f := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f(New("p", "1"))
		}()
	}
}

func TestResources(t *testing.T) {
	s := newTestServer()
	read := func(uri string) map[string]any {
		return last(t, serve(t, s, call(4, "resources/read", fmt.Sprintf(`{"uri":%q}`, uri))))
	}
	m := read("x://fixed/data") // a fixed resource wins over the template
	c := resultOf(t, m)["contents"].([]any)[0].(map[string]any)
	if c["text"] != "fixed" || c["uri"] != "x://fixed/data" || c["mimeType"] != "text/plain" {
		t.Errorf("fixed: %v", m)
	}
	m = read("x://abc/data")
	cs := resultOf(t, m)["contents"].([]any)
	if c := cs[0].(map[string]any); c["text"] != `{"id":"abc"}` || c["mimeType"] != "application/json" || c["uri"] != "x://abc/data" {
		t.Errorf("template: %v", cs)
	}
	if c := cs[1].(map[string]any); c["blob"] != "AAE=" || c["text"] != nil || c["mimeType"] != "application/octet-stream" {
		t.Errorf("blob: %v", cs)
	}
	m = read("x://a/b/data")
	if errCode(m) != CodeInvalidParams || m["error"].(map[string]any)["data"].(map[string]any)["uri"] != "x://a/b/data" {
		t.Errorf("unknown: %v", m)
	}
	if m = read("x://panic"); errCode(m) != CodeInternalError || !strings.Contains(fmt.Sprint(m["error"]), "resource x://panic panicked: resource panic") {
		t.Errorf("panic: %v", m)
	}
	if m = read("x://err"); errCode(m) != CodeInternalError || !strings.Contains(fmt.Sprint(m["error"]), "disk on fire") {
		t.Errorf("err: %v", m)
	}
}

func TestPrompts(t *testing.T) {
	s := newTestServer()
	get := func(args string) map[string]any {
		return last(t, serve(t, s, call(1, "prompts/get", `{"name":"p","arguments":`+args+`}`)))
	}
	m := get(`{"a":"x","b":"y"}`)
	r := resultOf(t, m)
	if r["description"] != "A prompt." || fmt.Sprint(r["messages"]) != "[map[content:map[text:xy type:text] role:user]]" {
		t.Errorf("prompt: %v", r)
	}
	for _, args := range []string{`{}`, `{"a":""}`, `null`} {
		if m := get(args); errCode(m) != CodeInvalidParams {
			t.Errorf("args %s: %v", args, m)
		}
	}
	if m := get(`{"a":"x","b":"panic"}`); errCode(m) != CodeInternalError {
		t.Errorf("panic: %v", m)
	}
	if m := last(t, serve(t, s, call(1, "prompts/get", `{"name":"q"}`))); errCode(m) != CodeInvalidParams {
		t.Errorf("unknown prompt: %v", m)
	}
}

func TestCompletions(t *testing.T) {
	s := newTestServer()
	complete := func(ref, arg, value string) map[string]any {
		p := fmt.Sprintf(`{"ref":%s,"argument":{"name":%q,"value":%q},"context":{"arguments":{"b":"1"}}}`, ref, arg, value)
		return last(t, serve(t, s, call(1, "completion/complete", p)))
	}
	c := resultOf(t, complete(`{"type":"ref/prompt","name":"p"}`, "a", "v"))["completion"].(map[string]any)
	if len(c["values"].([]any)) != 100 || c["total"] != 150.0 || c["hasMore"] != true {
		t.Errorf("capped: total %v hasMore %v", c["total"], c["hasMore"])
	}
	c = resultOf(t, complete(`{"type":"ref/resource","uri":"x://{id}/data"}`, "id", "al"))["completion"].(map[string]any)
	if fmt.Sprint(c["values"]) != "[Alpha alps]" || c["hasMore"] != false {
		t.Errorf("template: %v", c)
	}
	for _, ref := range []string{`{"type":"ref/prompt","name":"zz"}`, `{"type":"ref/resource","uri":"x://{id}/data"}`} {
		c = resultOf(t, complete(ref, "other", ""))["completion"].(map[string]any)
		if fmt.Sprint(c["values"]) != "[]" || c["total"] != 0.0 {
			t.Errorf("unknown ref: %v", c)
		}
	}
	if m := complete(`{"type":"ref/prompt","name":"p"}`, "a", "err"); errCode(m) != CodeInternalError {
		t.Errorf("error: %v", m)
	}
}

func TestProgressAndLog(t *testing.T) {
	s := New("mod", "1")
	AddTool(s, Tool{Name: "t"}, func(c *Context, _ struct{}) (string, error) {
		c.Progress(1, 0, "")
		c.Log(LevelWarning, errors.New("careful"))
		c.Log(LevelDebug, map[string]int{"n": 1})
		c.Log(LevelDebug, func() {}) // not JSON: sent as text
		return c.Method(), nil
	})
	msgs := serve(t, s, call(1, "tools/call", `{"name":"t","_meta":{"progressToken":7}}`))
	if len(msgs) != 5 {
		t.Fatalf("messages: %v", msgs)
	}
	if p := msgs[0]["params"].(map[string]any); msgs[0]["method"] != "notifications/progress" || p["progressToken"] != 7.0 || p["total"] != nil || p["message"] != nil {
		t.Errorf("progress: %v", msgs[0])
	}
	if p := msgs[1]["params"].(map[string]any); p["data"] != "careful" || p["level"] != "warning" || p["logger"] != "mod" {
		t.Errorf("log: %v", msgs[1])
	}
	if p := msgs[2]["params"].(map[string]any); fmt.Sprint(p["data"]) != "map[n:1]" {
		t.Errorf("log: %v", msgs[2])
	}
	if text, _ := toolText(t, msgs[4]); text != "tools/call" {
		t.Errorf("method: %q", text)
	}
	// No progress token: no progress.
	msgs = serve(t, s, call(1, "tools/call", `{"name":"t","_meta":{}}`))
	if msgs[0]["method"] == "notifications/progress" {
		t.Errorf("progress without token: %v", msgs[0])
	}
}

// pipeHost plays the host: it reads the guest's output line by line and
// answers the guest's requests with answer(method, params).
func pipeHost(t *testing.T, s *Server, request string, answer func(id json.RawMessage, method string, params json.RawMessage) string) []map[string]any {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := s.Serve(inR, outW)
		outW.Close()
		done <- err
	}()
	fmt.Fprintln(inW, request)
	var msgs []map[string]any
	dec := json.NewDecoder(outR)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		var m struct {
			ID     json.RawMessage
			Method string
			Params json.RawMessage
		}
		json.Unmarshal(raw, &m)
		var generic map[string]any
		json.Unmarshal(raw, &generic)
		msgs = append(msgs, generic)
		if m.Method != "" && m.ID != nil {
			go fmt.Fprintln(inW, answer(m.ID, m.Method, m.Params))
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return msgs
}

func TestClientRequests(t *testing.T) {
	s := New("client", "1")
	AddTool(s, Tool{Name: "ask"}, func(c *Context, _ struct{}) (string, error) {
		res, err := c.Elicit("ok?", `{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
		if err != nil {
			return "", err
		}
		roots, err := c.ListRoots()
		if err != nil {
			return "", err
		}
		sample, err := c.Sample(SampleParams{Messages: []SamplingMessage{{Role: "user", Content: Text("hi")}}, MaxTokens: 10})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %v %v %s %s", res.Action, res.Content["ok"], roots, sample.Content.Text, sample.Model), nil
	})
	var seen []string
	var mu sync.Mutex
	msgs := pipeHost(t, s, toolCall("ask", `{}`), func(id json.RawMessage, method string, params json.RawMessage) string {
		mu.Lock()
		seen = append(seen, method+" "+string(params))
		mu.Unlock()
		var result string
		switch method {
		case "elicitation/create":
			result = `{"action":"accept","content":{"ok":true}}`
		case "roots/list":
			result = `{"roots":[{"uri":"file:///work","name":"work"}]}`
		case "sampling/createMessage":
			result = `{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m1"}`
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
	})
	if text, isErr := toolText(t, last(t, msgs)); isErr || text != "accept true [{file:///work work}] hello m1" {
		t.Errorf("result %q %v", text, isErr)
	}
	want := []string{
		`elicitation/create {"message":"ok?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`,
		`roots/list {}`,
		`sampling/createMessage {"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`,
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("requests:\n got %q\nwant %q", seen, want)
	}
	// Each request had a distinct id.
	ids := map[string]bool{}
	for _, m := range msgs[:3] {
		ids[fmt.Sprint(m["id"])] = true
	}
	if len(ids) != 3 {
		t.Errorf("ids not unique: %v", msgs[:3])
	}
}

func TestClientErrorAndDecline(t *testing.T) {
	s := New("client", "1")
	type form struct {
		Approve bool `json:"approve"`
	}
	AddTool(s, Tool{Name: "ask"}, func(c *Context, _ struct{}) (string, error) {
		res, err := c.Elicit("ok?", &form{})
		if err != nil {
			var ce *ClientError
			if errors.As(err, &ce) {
				return "", fmt.Errorf("client said no: %d", ce.Code)
			}
			return "", err
		}
		return res.Action, nil
	})
	msgs := pipeHost(t, s, toolCall("ask", `{}`), func(id json.RawMessage, method string, _ json.RawMessage) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"elicitation not supported"}}`, id)
	})
	if text, isErr := toolText(t, last(t, msgs)); !isErr || text != "client said no: -32601" {
		t.Errorf("result %q %v", text, isErr)
	}
	msgs = pipeHost(t, s, toolCall("ask", `{}`), func(id json.RawMessage, method string, _ json.RawMessage) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"decline"}}`, id)
	})
	if text, isErr := toolText(t, last(t, msgs)); isErr || text != "decline" {
		t.Errorf("result %q %v", text, isErr)
	}
}

// Responses may arrive in any order; stray lines are ignored.
func TestConcurrentRequestsOutOfOrder(t *testing.T) {
	s := New("client", "1")
	AddTool(s, Tool{Name: "ask"}, func(c *Context, _ struct{}) (string, error) {
		var wg sync.WaitGroup
		answers := make([]string, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.Elicit(fmt.Sprint("q", i), map[string]any{"type": "object"})
				if err != nil {
					answers[i] = err.Error()
					return
				}
				answers[i] = r.Action
			}()
		}
		wg.Wait()
		return strings.Join(answers, ","), nil
	})
	// Feed both responses in reverse id order once both requests are out.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { s.Serve(inR, outW); outW.Close() }()
	fmt.Fprintln(inW, toolCall("ask", `{}`))
	dec := json.NewDecoder(outR)
	actions := map[string]string{}
	var order []string
	for range 2 {
		var m struct {
			ID     json.RawMessage
			Params struct{ Message string }
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		actions[string(m.ID)] = map[string]string{"q0": "accept", "q1": "decline"}[m.Params.Message]
		order = append([]string{string(m.ID)}, order...)
	}
	fmt.Fprintln(inW, `garbage`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/whatever"}`)
	for _, id := range order {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"result":{"action":%q}}`+"\n", id, actions[id])
	}
	var resp map[string]any
	if err := dec.Decode(&resp); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	if text, _ := toolText(t, resp); text != "accept,decline" {
		t.Errorf("answers %q", text)
	}
}

func TestClientRequestStdinClosed(t *testing.T) {
	s := New("client", "1")
	AddTool(s, Tool{Name: "roots"}, func(c *Context, _ struct{}) (string, error) {
		_, err := c.ListRoots()
		return "", err
	})
	text, isErr := toolText(t, last(t, serve(t, s, toolCall("roots", `{}`))))
	if !isErr || !strings.Contains(text, "stdin closed before the answer arrived") {
		t.Errorf("result %q %v", text, isErr)
	}
}

func TestLongLines(t *testing.T) {
	s := New("long", "1")
	AddTool(s, Tool{Name: "len"}, func(c *Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return fmt.Sprint(len(in.Text)), nil
	})
	big := strings.Repeat("x", 3<<20)
	text, _ := toolText(t, last(t, serve(t, s, toolCall("len", `{"text":"`+big+`"}`))))
	if text != fmt.Sprint(len(big)) {
		t.Errorf("len = %s", text)
	}
}

func TestNoHTMLEscaping(t *testing.T) {
	s := New("html", "1")
	AddTool(s, Tool{Name: "t"}, func(c *Context, _ struct{}) (string, error) { return "<a & b>\nline2", nil })
	var out bytes.Buffer
	s.Serve(strings.NewReader(toolCall("t", `{}`)), &out)
	if !strings.Contains(out.String(), `"<a & b>\nline2"`) || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("output %q", out.String())
	}
}

func TestIDKey(t *testing.T) {
	if idKey(json.RawMessage("1")) != idKey(json.RawMessage(" 1.0 ")) || idKey(json.RawMessage("1")) == idKey(json.RawMessage(`"1"`)) {
		t.Error("idKey equality")
	}
}

func TestPrepareBuildsToolCodecs(t *testing.T) {
	type in struct {
		N *int `json:"n"`
	}
	type out struct {
		M map[string][]int `json:"m"`
	}
	s := New("prep", "1")
	AddTool(s, Tool{Name: "a"}, func(*Context, in) (*out, error) { return &out{}, nil })
	AddTool(s, Tool{Name: "b"}, func(*Context, map[string]any) (string, error) { return "", nil })
	s.AddRawTool(Tool{Name: "raw"}, func(*Context, json.RawMessage) (*ToolResult, error) { return nil, nil })
	s.Prepare() // must not panic on pointers, maps, strings or raw tools
	if s.tools[0].warm == nil || s.tools[2].warm != nil {
		t.Fatal("typed tools have a warm-up, raw tools none")
	}
}

// A typed tool's result is written around its encoded output, not encoded
// again: the response line must still be exactly the JSON encoding/json
// would give, field for field, with string ids and odd characters.
func TestTypedResultWrittenAsEncoded(t *testing.T) {
	type out struct {
		S string `json:"s"`
		N int    `json:"n"`
	}
	s := New("enc", "1")
	AddTool(s, Tool{Name: "t"}, func(*Context, struct{}) (out, error) { return out{S: "<a> \"b\"\u2028", N: 7}, nil })
	var buf bytes.Buffer
	req := `{"jsonrpc":"2.0","id":"x y","method":"tools/call","params":{"name":"t","arguments":{}}}`
	if err := s.Serve(strings.NewReader(req+"\n"), &buf); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("not one line: %q", line)
	}
	var got struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Result  json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil || got.JSONRPC != "2.0" || got.ID != "x y" {
		t.Fatalf("envelope %q: %v", line, err)
	}
	var res struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		Structured out `json:"structuredContent"`
	}
	if err := json.Unmarshal(got.Result, &res); err != nil {
		t.Fatal(err)
	}
	want := out{S: "<a> \"b\"\u2028", N: 7}
	if res.Structured != want || len(res.Content) != 1 || res.Content[0].Type != "text" {
		t.Fatalf("result %s", got.Result)
	}
	var text out
	if err := json.Unmarshal([]byte(res.Content[0].Text), &text); err != nil || text != want {
		t.Fatalf("text content %q: %v", res.Content[0].Text, err)
	}
}
