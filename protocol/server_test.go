package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/schema"
)

// fakeModule is a Module whose calls are answered by a Go function.
type fakeModule struct {
	name string
	desc *abi.Description
	call func(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error)
}

func (f *fakeModule) Name() string                  { return f.name }
func (f *fakeModule) Description() *abi.Description { return f.desc }
func (f *fakeModule) Schemas(tool string) (contract.ToolSchemas, bool) {
	for _, t := range f.desc.Tools {
		if t.Name == tool {
			var s contract.ToolSchemas
			in := t.InputSchema
			if len(in) == 0 {
				in = json.RawMessage(`{"type":"object"}`)
			}
			s.Input, _ = schema.Compile(in, true)
			if len(t.OutputSchema) > 0 {
				s.Output, _ = schema.Compile(t.OutputSchema, false)
			}
			return s, true
		}
	}
	return contract.ToolSchemas{}, false
}
func (f *fakeModule) Call(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
	return f.call(ctx, method, params, peer)
}

func textReply(s string) *contract.Reply {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}})
	return &contract.Reply{Result: b}
}

// newTestServer serves one fake module with an echo tool, a typed tool with
// an output schema, a resource, a template and a prompt.
func newTestServer(t *testing.T, extraTools int) *Server {
	t.Helper()
	desc := &abi.Description{ABIVersion: 1, Name: "fake", Completions: true,
		Tools: []abi.Tool{
			{Name: "echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
			{Name: "typed", Title: "Typed", Description: "typed", InputSchema: json.RawMessage(`{"type":"object"}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		},
		Resources:         []abi.Resource{{URI: "fake://r", Name: "r"}},
		ResourceTemplates: []abi.ResourceTemplate{{URITemplate: "fake://t/{id}", Name: "t"}},
		Prompts:           []abi.Prompt{{Name: "p", Description: "p"}},
	}
	for i := 0; i < extraTools; i++ {
		desc.Tools = append(desc.Tools, abi.Tool{Name: fmt.Sprintf("tool%03d", i), InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	mod := &fakeModule{name: "fake", desc: desc, call: func(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
		var p struct {
			Name      string          `json:"name"`
			URI       string          `json:"uri"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(params, &p)
		switch {
		case method == "tools/call" && p.Name == "typed":
			if strings.Contains(string(p.Arguments), "bad") {
				return &contract.Reply{Result: []byte(`{"content":[],"structuredContent":{"n":"x"}}`)}, nil
			}
			return &contract.Reply{Result: []byte(`{"content":[],"structuredContent":{"n":1}}`)}, nil
		case method == "tools/call":
			if peer != nil {
				peer.Notify(ctx, "notifications/progress", []byte(`{"progressToken":"guest-made-up","progress":1,"total":2}`))
				peer.Notify(ctx, "notifications/message", []byte(`{"level":"debug","data":"d"}`))
				peer.Notify(ctx, "notifications/message", []byte(`{"level":"error","data":"e"}`))
			}
			return textReply("echo " + string(p.Arguments)), nil
		case method == "resources/read" && p.URI == "fake://t/404":
			return &contract.Reply{Error: &abi.Error{Code: -32602, Message: "nope"}}, nil
		case method == "resources/read":
			return &contract.Reply{Result: []byte(`{"contents":[{"uri":"` + p.URI + `","text":"hi"}]}`)}, nil
		case method == "prompts/get":
			return &contract.Reply{Result: []byte(`{"messages":[]}`)}, nil
		case method == "completion/complete":
			return &contract.Reply{Result: []byte(`{"completion":{"values":["a"]}}`)}, nil
		}
		return nil, fmt.Errorf("unexpected %s", method)
	}}
	s := NewServer(Options{Name: "test", Version: "1.0", PageSize: 10})
	cat, _ := NewCatalog([]Module{mod}, nil)
	s.SetCatalog(cat)
	return s
}

// recorder is a Stream that keeps what was sent.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Send(_ context.Context, msg []byte) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, string(msg))
	r.mu.Unlock()
	return nil
}

func handle(t *testing.T, s *Server, sess *Session, line string, st Stream) Response {
	t.Helper()
	return handleHint(t, s, sess, line, st, Hint{})
}

func handleHint(t *testing.T, s *Server, sess *Session, line string, st Stream, h Hint) Response {
	t.Helper()
	msg, id, perr := Decode([]byte(line))
	if perr != nil {
		return Response{Body: ErrorResponse(id, perr), Code: perr.Code}
	}
	return s.Handle(context.Background(), sess, msg, st, h)
}

func initialized(t *testing.T, s *Server, version string) *Session {
	t.Helper()
	sess := NewSession()
	r := handle(t, s, sess, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	if r.Code != 0 {
		t.Fatalf("initialize: %s", r.Body)
	}
	return sess
}

func TestDecodeEnvelope(t *testing.T) {
	cases := []struct {
		in   string
		code int
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "1"},
		{`{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, 0, `"a"`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 0, "1"},
		{`not json`, CodeParseError, ""},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, "1"},
		{`{"id":1,"method":"ping"}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70) + `}`, CodeInvalidRequest, ""},
	}
	for _, c := range cases {
		_, id, err := Decode([]byte(c.in))
		code := 0
		if err != nil {
			code = err.Code
		}
		if code != c.code || string(id) != c.id {
			t.Errorf("Decode(%.60s): code %d id %q; want %d %q", c.in, code, id, c.code, c.id)
		}
	}
}

func TestInitializeNegotiates(t *testing.T) {
	s := newTestServer(t, 0)
	for _, c := range []struct{ asked, got string }{
		{"2024-11-05", "2024-11-05"}, {"2025-06-18", "2025-06-18"}, {"2025-11-25", "2025-11-25"}, {"1999-01-01", "2025-11-25"},
	} {
		r := handle(t, s, NewSession(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+c.asked+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
		if !strings.Contains(string(r.Body), `"protocolVersion":"`+c.got+`"`) || !strings.Contains(string(r.Body), `"completions":{}`) {
			t.Errorf("asked %s: %s", c.asked, r.Body)
		}
	}
	r := handle(t, s, NewSession(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{}}}`, nil)
	if r.Code != CodeInvalidParams {
		t.Errorf("initialize without protocolVersion: %s", r.Body)
	}
}

func TestToolsListShapesAndPages(t *testing.T) {
	s := newTestServer(t, 25)
	old := initialized(t, s, "2024-11-05")
	r := handle(t, s, old, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)
	if strings.Contains(string(r.Body), "outputSchema") || strings.Contains(string(r.Body), `"title"`) {
		t.Errorf("2024-11-05 tools/list carries fields it does not know: %s", r.Body)
	}
	cur := initialized(t, s, "2025-11-25")
	var names []string
	cursor := ""
	for pages := 0; ; pages++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		r := handle(t, s, cur, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":`+params+`}`, nil)
		var res struct {
			Result struct {
				Tools []struct {
					Name         string          `json:"name"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(r.Body, &res); err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Result.Tools {
			names = append(names, tl.Name)
			if tl.Name == "typed" && len(tl.OutputSchema) == 0 {
				t.Error("2025-11-25 tools/list lacks outputSchema")
			}
		}
		if res.Result.NextCursor == "" {
			break
		}
		cursor = res.Result.NextCursor
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if len(names) != 27 || names[0] != "echo" || names[26] != "typed" {
		t.Fatalf("paged names (%d): %v", len(names), names)
	}
	r = handle(t, s, cur, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"%%%"}}`, nil)
	if r.Code != CodeInvalidParams {
		t.Fatalf("bad cursor: %s", r.Body)
	}
}

func TestToolCallErrors(t *testing.T) {
	s := newTestServer(t, 0)
	sess := initialized(t, s, "2025-11-25")
	cases := []struct {
		params string
		want   string
	}{
		{`{"name":"nope","arguments":{}}`, `"code":-32602,"message":"Unknown tool: nope"`},
		{`{"name":"echo","arguments":{}}`, `"isError":true`},
		{`{"name":"echo","arguments":{"text":5}}`, `Invalid arguments for tool echo`},
		{`{"name":"typed","arguments":{"bad":1}}`, `does not match its outputSchema`},
		{`{"name":"typed","arguments":{}}`, `"structuredContent":{"n":1}`},
		{`{"name":"echo","arguments":{"text":"hi"}}`, `echo {\"text\":\"hi\"}`},
	}
	for _, c := range cases {
		r := handle(t, s, sess, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":`+c.params+`}`, nil)
		if !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: %s; want %s", c.params, r.Body, c.want)
		}
	}
}

func TestNotificationsStampedAndFiltered(t *testing.T) {
	s := newTestServer(t, 0)
	sess := initialized(t, s, "2025-11-25")
	st := &recorder{}
	handle(t, s, sess, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":42}}}`, st)
	got := strings.Join(st.msgs, "\n")
	if !strings.Contains(got, `"progressToken":42,"progress":1,"total":2`) || strings.Contains(got, "guest-made-up") {
		t.Errorf("progress not stamped with the client's token:\n%s", got)
	}
	if strings.Contains(got, `"debug"`) || !strings.Contains(got, `"error"`) {
		t.Errorf("log not filtered at the default level info:\n%s", got)
	}
	st2 := &recorder{}
	handle(t, s, sess, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, st2)
	if strings.Contains(strings.Join(st2.msgs, ""), "progress") {
		t.Error("progress sent to a client that asked for none")
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	s := newTestServer(t, 0)
	sess := initialized(t, s, "2025-11-25")
	for _, c := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"fake://r"}}`, `"text":"hi"`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"fake://t/7"}}`, `"uri":"fake://t/7"`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"fake://t/404"}}`, `"code":-32002,"message":"nope","data":{"uri":"fake://t/404"}`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"other://x"}}`, `"code":-32002`},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}`, `"messages":[]`},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"q"}}`, `"code":-32602`},
		{`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`, `"values":["a"]`},
		{`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"x://none"},"argument":{"name":"a","value":""}}}`, `"values":[]`},
		{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`, `"code":-32602`},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `"result":{}`},
		{`{"jsonrpc":"2.0","id":1,"method":"no/such"}`, `"code":-32601`},
	} {
		r := handle(t, s, sess, c.line, nil)
		if !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s\n got %s\nwant %s", c.line, r.Body, c.want)
		}
	}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestModernEra(t *testing.T) {
	s := newTestServer(t, 0)
	for _, c := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, `"code":-32602`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, `"code":-32602,"message":"Missing required _meta field: io.modelcontextprotocol/clientCapabilities"`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}}`, `"code":-32022,"message":"Unsupported protocol version","data":{`},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + modernMeta + `}}`, `"code":-32601`},
		{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{` + modernMeta + `,"level":"info"}}`, `"code":-32601`},
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`, `"supportedVersions":["2026-07-28","2025-11-25"`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`, `"resultType":"complete","ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0"}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modernMeta + `,"name":"echo","arguments":{"text":"x"}}}`, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo"`},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{` + modernMeta + `,"uri":"fake://t/404"}}`, `"code":-32602,"message":"nope","data":{"uri":"fake://t/404"}`},
	} {
		// The HTTP transport passes the MCP-Protocol-Version header as
		// the hint; a request without _meta is then modern too.
		r := handleHint(t, s, nil, c.line, nil, Hint{Version: V20260728})
		if !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s\n got %s\nwant %s", c.line, r.Body, c.want)
		}
		if r.Era != Modern {
			t.Errorf("%s: served in era %d", c.line, r.Era)
		}
	}
}

func TestDecorateKeepsGuestMembers(t *testing.T) {
	s := NewServer(Options{Name: "n", Version: "v"})
	out := s.decorate([]byte(`{"content":[],"_meta":{"x":1}}`), noCache)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	meta := m["_meta"].(map[string]any)
	if m["resultType"] != "complete" || meta["x"] != float64(1) || meta[MetaServerInfo] == nil {
		t.Fatalf("decorate: %s", out)
	}
	if got := string(s.decorate([]byte(`{}`), noCache)); got != `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"n","version":"v"}}}` {
		t.Fatalf("decorate empty: %s", got)
	}
	// A guest's _meta spelled with an escape is still its _meta: the
	// answer holds one _meta, with the server's info in it (a client
	// whose parser keeps the last of two would otherwise lose it).
	out = s.decorate([]byte(`{"content":[],"_m\u0065ta":{"x":1},"resultTyp\u0065":"complete"}`), cachePublic)
	if n := strings.Count(string(out), "_meta") + strings.Count(string(out), `_m\u0065ta`); n != 1 {
		t.Fatalf("decorate of an escaped _meta: %d _meta members in %s", n, out)
	}
	m = nil
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if meta, _ := m["_meta"].(map[string]any); meta["x"] != float64(1) || meta[MetaServerInfo] == nil || m["ttlMs"] == nil {
		t.Fatalf("decorate of an escaped _meta: %s", out)
	}
	// Decorating never re-encodes the guest's values: a large integer,
	// a float's spelling and escapes come out as they went in, whichever
	// way decorate takes (any \u escape sends a result the decoding way).
	for _, in := range []string{
		`{"content":[],"structuredContent":{"n":12345678901234567891,"f":1.50,"s":"caf\u00e9"}}`,
		`{"content":[],"structuredContent":{"n":12345678901234567891,"f":1.50},"_meta":{"big":98765432109876543210}}`,
	} {
		out := string(s.decorate([]byte(in), cachePublic))
		for _, want := range []string{`12345678901234567891`, `1.50`} {
			if !strings.Contains(out, want) {
				t.Errorf("decorate(%s) = %s: %s changed", in, out, want)
			}
		}
		if strings.Contains(in, "98765432109876543210") && !strings.Contains(out, "98765432109876543210") {
			t.Errorf("decorate(%s) = %s: the _meta value changed", in, out)
		}
	}
}

// TestCancelledNotificationEndsCall: notifications/cancelled ends the call
// whose id it names, however either side spells the id (a client matches
// answers by the decoded id: "c1" and "\u00631" are one).
func TestCancelledNotificationEndsCall(t *testing.T) {
	for _, ids := range [][2]string{
		{`"c1"`, `"c1"`},
		{`"c1"`, `"\u00631"`},
		{`"\u00631"`, `"c1"`},
		{`7`, `7`},
	} {
		t.Run(ids[0]+"/"+ids[1], func(t *testing.T) {
			started := make(chan struct{})
			mod := &fakeModule{name: "slow", desc: &abi.Description{ABIVersion: 1, Tools: []abi.Tool{{Name: "wait"}}},
				call: func(ctx context.Context, _ string, _ []byte, _ contract.Peer) (*contract.Reply, error) {
					close(started)
					select {
					case <-ctx.Done():
					case <-time.After(10 * time.Second):
						return nil, errors.New("not canceled within 10 s")
					}
					return nil, &host.GuestError{Module: "slow", Kind: host.KindCanceled, Msg: "call canceled", Err: context.Cause(ctx)}
				}}
			s := NewServer(Options{})
			cat, _ := NewCatalog([]Module{mod}, nil)
			s.SetCatalog(cat)
			sess := initialized(t, s, "2025-11-25")
			done := make(chan Response, 1)
			go func() {
				done <- handle(t, s, sess, `{"jsonrpc":"2.0","id":`+ids[0]+`,"method":"tools/call","params":{"name":"wait","arguments":{}}}`, nil)
			}()
			<-started
			handle(t, s, sess, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+ids[1]+`}}`, nil)
			if r := <-done; r.Body != nil {
				t.Fatalf("the call named %s, canceled as %s, was answered: %s", ids[0], ids[1], r.Body)
			}
		})
	}
}

func TestSetCatalogNotifiesListeners(t *testing.T) {
	s := newTestServer(t, 0)
	var got []string
	var mu sync.Mutex
	remove := s.AddListener(&Listener{Tools: true, Prompts: true, Send: func(msg []byte) {
		mu.Lock()
		got = append(got, string(msg))
		mu.Unlock()
	}})
	defer remove()
	empty, _ := NewCatalog(nil, nil)
	s.SetCatalog(empty)
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(got, "\n")
	if !strings.Contains(all, "notifications/tools/list_changed") || !strings.Contains(all, "notifications/prompts/list_changed") || strings.Contains(all, "resources/list_changed") {
		t.Fatalf("notifications: %s", all)
	}
}

func TestDuplicateNamesFirstModuleWins(t *testing.T) {
	mk := func(name string) Module {
		return &fakeModule{name: name, desc: &abi.Description{ABIVersion: 1, Tools: []abi.Tool{{Name: "same"}}}}
	}
	cat, conflicts := NewCatalog([]Module{mk("b"), mk("a")}, nil)
	m, _ := cat.Tool("same")
	if m.Name() != "a" || len(conflicts) != 1 || conflicts[0].Dropped != "b" {
		t.Fatalf("owner %s, conflicts %+v", m.Name(), conflicts)
	}
}
