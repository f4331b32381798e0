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
)

// fakeGuest is a Module whose calls run a Go function in place of a guest.
// ask sends a request to the client the way the host does for a guest.
type fakeGuest struct {
	name string
	desc abi.Description
	run  func(g *guestRun) (*contract.Reply, error)
}

func (f *fakeGuest) Name() string                                { return f.name }
func (f *fakeGuest) Description() *abi.Description               { return &f.desc }
func (f *fakeGuest) Schemas(string) (contract.ToolSchemas, bool) { return contract.ToolSchemas{}, true }
func (f *fakeGuest) Call(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
	return f.run(&guestRun{ctx: ctx, method: method, params: params, peer: peer})
}

// guestRun is one fake call: it collects the requests left to a retry.
type guestRun struct {
	ctx    context.Context
	method string
	params []byte
	peer   contract.Peer
	inputs []contract.InputRequest
	state  []byte
}

// ask sends a request under key; ok is false when it was left to a retry.
func (g *guestRun) ask(key, method, params string) (res []byte, ok bool, err error) {
	res, err = g.peer.Request(contract.WithInputKey(g.ctx, key), method, []byte(params))
	if errors.Is(err, contract.ErrInputRequired) {
		g.inputs = append(g.inputs, contract.InputRequest{Key: key, Method: method, Params: []byte(params)})
		return nil, false, nil
	}
	return res, err == nil, err
}

// reply ends the call: with the input requests if any, else with text.
func (g *guestRun) reply(text string) (*contract.Reply, error) {
	if len(g.inputs) > 0 {
		return &contract.Reply{InputRequests: g.inputs, State: g.state}, nil
	}
	b, _ := json.Marshal(text)
	return &contract.Reply{Result: []byte(`{"content":[{"type":"text","text":` + string(b) + `}]}`)}, nil
}

const (
	elicitName  = `{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`
	sampleParam = `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`
	allCaps     = `{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`
)

func mrtrServer(t *testing.T, opts Options) (*Server, *fakeGuest) {
	t.Helper()
	g := &fakeGuest{name: "fake", desc: abi.Description{ABIVersion: 1,
		Tools: []abi.Tool{
			{Name: "hello", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "multi", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "rounds", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "fallback", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "needs_sampling", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "stateful", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "trigger", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
		Resources: []abi.Resource{{URI: "test://r", Name: "r"}},
		Prompts:   []abi.Prompt{{Name: "ctx"}},
	}}
	g.run = func(c *guestRun) (*contract.Reply, error) {
		var p struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
			Meta struct {
				State json.RawMessage `json:"wasmcp/state"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(c.params, &p)
		if c.method == abi.MethodResourceRead || c.method == abi.MethodPromptsGet {
			res, ok, err := c.ask("user_context", abi.MethodElicit, elicitName)
			if err != nil || !ok {
				return c.reply("")
			}
			if c.method == abi.MethodPromptsGet {
				return &contract.Reply{Result: []byte(`{"messages":[{"role":"user","content":{"type":"text","text":` + fmt.Sprintf("%q", res) + `}}]}`)}, nil
			}
			return &contract.Reply{Result: []byte(`{"contents":[{"uri":"test://r","text":"ok"}]}`)}, nil
		}
		switch p.Name {
		case "hello":
			res, ok, err := c.ask("user_name", abi.MethodElicit, elicitName)
			if err != nil {
				return nil, err
			}
			if !ok {
				return c.reply("")
			}
			var e struct {
				Content struct {
					Name string `json:"name"`
				} `json:"content"`
			}
			_ = json.Unmarshal(res, &e)
			return c.reply("Hello, " + e.Content.Name + "!")
		case "multi":
			c.ask("user_name", abi.MethodElicit, elicitName)
			c.ask("greeting", abi.MethodSample, sampleParam)
			c.ask("client_roots", abi.MethodListRoots, `{}`)
			return c.reply("all three")
		case "rounds":
			if _, ok, _ := c.ask("step1", abi.MethodElicit, elicitName); !ok {
				return c.reply("")
			}
			if _, ok, _ := c.ask("step2", abi.MethodElicit, elicitName); !ok {
				return c.reply("")
			}
			return c.reply("done")
		case "fallback":
			_, ok, err := c.ask("confirm", abi.MethodElicit, elicitName)
			var ae *abi.Error
			if errors.As(err, &ae) && ae.Code == abi.CodeMissingCapability {
				_, ok, err = c.ask("llm", abi.MethodSample, sampleParam)
			}
			if err != nil {
				return nil, err
			}
			if !ok {
				return c.reply("")
			}
			return c.reply("confirmed")
		case "needs_sampling":
			_, _, err := c.ask("s", abi.MethodSample, sampleParam)
			var ae *abi.Error
			if errors.As(err, &ae) {
				return &contract.Reply{Error: ae}, nil
			}
			return c.reply("sampled")
		case "stateful":
			if len(p.Meta.State) > 0 {
				return c.reply("state " + string(p.Meta.State))
			}
			c.state = []byte(`{"n":41}`)
			c.ask("more", abi.MethodElicit, elicitName)
			return c.reply("no state")
		case "plain":
			return &contract.Reply{Result: []byte(`{"content":[{"type":"text","text":"plain"}]}`)}, nil
		case "trigger":
			c.peer.Notify(c.ctx, abi.MethodToolsListChanged, nil)
			c.peer.Notify(c.ctx, abi.MethodResourceUpdated, []byte(`{"uri":"test://r"}`))
			c.peer.Notify(c.ctx, abi.MethodResourceUpdated, []byte(`{"uri":"test://not-mine"}`))
			return c.reply("triggered")
		}
		return nil, fmt.Errorf("unknown tool %s", p.Name)
	}
	srv := NewServer(opts)
	cat, _ := NewCatalog([]Module{g}, nil)
	srv.SetCatalog(cat)
	return srv, g
}

// modernCall sends a modern request; extra is spliced into params.
func modernCall(t *testing.T, srv *Server, hint Hint, method, caps, extra string) map[string]any {
	t.Helper()
	resp := modernSend(t, srv, hint, nil, method, caps, extra)
	var out map[string]any
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		t.Fatalf("response %s: %v", resp.Body, err)
	}
	return out
}

func modernSend(t *testing.T, srv *Server, hint Hint, stream Stream, method, caps, extra string) Response {
	t.Helper()
	params := `{"_meta":{"` + MetaProtocolVersion + `":"2026-07-28","` + MetaClientCapabilities + `":` + caps + `}`
	if extra != "" {
		params += "," + extra
	}
	params += "}"
	if strings.Contains(extra, `"_meta":`) {
		// extra brings its own _meta (two are refused as ambiguous).
		params = "{" + extra + "}"
	}
	msg, _, perr := Decode([]byte(`{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`))
	if perr != nil {
		t.Fatalf("decode: %v", perr)
	}
	return srv.Handle(context.Background(), nil, msg, stream, hint)
}

func result(t *testing.T, resp map[string]any) map[string]any {
	t.Helper()
	r, ok := resp["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", resp)
	}
	return r
}

func errCode(resp map[string]any) int {
	e, ok := resp["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(e["code"].(float64))
}

func text(t *testing.T, res map[string]any) string {
	t.Helper()
	c, _ := res["content"].([]any)
	if len(c) == 0 {
		t.Fatalf("no content: %v", res)
	}
	return c[0].(map[string]any)["text"].(string)
}

func TestMRTRElicitation(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	r1 := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"hello","arguments":{}`))
	if r1["resultType"] != "input_required" {
		t.Fatalf("round 1: %v", r1)
	}
	if _, ok := r1["ttlMs"]; ok {
		t.Fatalf("input_required result with cache hints: %v", r1)
	}
	reqs := r1["inputRequests"].(map[string]any)
	un := reqs["user_name"].(map[string]any)
	if un["method"] != "elicitation/create" || un["params"].(map[string]any)["message"] != "What is your name?" {
		t.Fatalf("input request: %v", un)
	}
	state, _ := r1["requestState"].(string)
	if state == "" {
		t.Fatal("no requestState")
	}
	if r1["_meta"].(map[string]any)[MetaServerInfo] == nil {
		t.Fatal("no serverInfo")
	}
	answer := `"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}`
	// With the state, without it, with extra keys: all complete.
	for _, extra := range []string{
		answer + `,"requestState":"` + state + `"`,
		answer,
		`"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}},"unknown":{"x":1},"other":5}`,
	} {
		r2 := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"hello","arguments":{},`+extra))
		if r2["resultType"] != "complete" || text(t, r2) != "Hello, Alice!" {
			t.Fatalf("retry %s: %v", extra, r2)
		}
	}
	// Wrong key, malformed answer, null: asked again.
	for _, extra := range []string{
		`"inputResponses":{"wrong_key":{"action":"accept","content":{"name":"Bob"}}}`,
		`"inputResponses":{"user_name":12345}`,
		`"inputResponses":{"user_name":{"action":"maybe"}}`,
		`"inputResponses":null`,
	} {
		r := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"hello","arguments":{},`+extra))
		if r["resultType"] != "input_required" {
			t.Fatalf("%s: %v", extra, r)
		}
	}
	if c := errCode(modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"hello","arguments":{},"inputResponses":"x"`)); c != CodeInvalidParams {
		t.Fatalf("inputResponses string: code %d", c)
	}
}

func TestMRTRStateBinding(t *testing.T) {
	srv, _ := mrtrServer(t, Options{StateTTL: time.Minute})
	r1 := result(t, modernCall(t, srv, Hint{Principal: "alice"}, "tools/call", allCaps, `"name":"hello","arguments":{"a":1,"b":[1,2]}`))
	state := r1["requestState"].(string)
	answer := `"inputResponses":{"user_name":{"action":"accept","content":{"name":"A"}}},`
	ok := result(t, modernCall(t, srv, Hint{Principal: "alice"}, "tools/call", allCaps,
		answer+`"name":"hello","arguments":{"b":[1,2], "a":1},"requestState":"`+state+`"`))
	if ok["resultType"] != "complete" {
		t.Fatalf("same request, arguments reordered: %v", ok)
	}
	for name, c := range map[string]struct {
		hint  Hint
		extra string
	}{
		"tampered":        {Hint{Principal: "alice"}, `"name":"hello","arguments":{"a":1,"b":[1,2]},"requestState":"` + state + `-TAMPERED"`},
		"flipped":         {Hint{Principal: "alice"}, `"name":"hello","arguments":{"a":1,"b":[1,2]},"requestState":"` + flip(state) + `"`},
		"empty":           {Hint{Principal: "alice"}, `"name":"hello","arguments":{"a":1,"b":[1,2]},"requestState":""`},
		"other principal": {Hint{Principal: "mallory"}, `"name":"hello","arguments":{"a":1,"b":[1,2]},"requestState":"` + state + `"`},
		"other arguments": {Hint{Principal: "alice"}, `"name":"hello","arguments":{"a":2,"b":[1,2]},"requestState":"` + state + `"`},
		"other tool":      {Hint{Principal: "alice"}, `"name":"rounds","arguments":{"a":1,"b":[1,2]},"requestState":"` + state + `"`},
	} {
		if code := errCode(modernCall(t, srv, c.hint, "tools/call", allCaps, answer+c.extra)); code != CodeInvalidParams {
			t.Errorf("%s: code %d, want -32602", name, code)
		}
	}
	// Another principal's state gets exactly what a forged one gets.
	mallory := modernCall(t, srv, Hint{Principal: "mallory"}, "tools/call", allCaps, answer+`"name":"hello","arguments":{"a":1,"b":[1,2]},"requestState":"`+state+`"`)
	forged := modernCall(t, srv, Hint{Principal: "mallory"}, "tools/call", allCaps, answer+`"name":"hello","arguments":{"a":1,"b":[1,2]},"requestState":"`+flip(state)+`"`)
	if fmt.Sprint(mallory["error"]) != fmt.Sprint(forged["error"]) {
		t.Errorf("another principal's state: %v; a forged one: %v", mallory["error"], forged["error"])
	}
	// A state from another server (another key) or past its expiry fails.
	other, _ := mrtrServer(t, Options{})
	if code := errCode(modernCall(t, other, Hint{Principal: "alice"}, "tools/call", allCaps,
		answer+`"name":"hello","arguments":{"a":1,"b":[1,2]},"requestState":"`+state+`"`)); code != CodeInvalidParams {
		t.Errorf("other key: code %d", code)
	}
	srv.sealer.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	resp := modernCall(t, srv, Hint{Principal: "alice"}, "tools/call", allCaps,
		answer+`"name":"hello","arguments":{"a":1,"b":[1,2]},"requestState":"`+state+`"`)
	if errCode(resp) != CodeInvalidParams || !strings.Contains(fmt.Sprint(resp["error"]), "expired") {
		t.Errorf("expired: %v", resp)
	}
}

func flip(s string) string {
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestMRTRMultipleAndRounds(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	r1 := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"multi","arguments":{}`))
	reqs := r1["inputRequests"].(map[string]any)
	if len(reqs) != 3 || reqs["greeting"].(map[string]any)["method"] != "sampling/createMessage" ||
		reqs["client_roots"].(map[string]any)["method"] != "roots/list" {
		t.Fatalf("multi: %v", r1)
	}
	all := `"inputResponses":{"user_name":{"action":"accept","content":{"name":"A"}},` +
		`"greeting":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"},` +
		`"client_roots":{"roots":[{"uri":"file:///r"}]}},"requestState":"` + r1["requestState"].(string) + `"`
	if r := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"multi","arguments":{},`+all)); r["resultType"] != "complete" {
		t.Fatalf("multi retry: %v", r)
	}

	s1 := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"rounds","arguments":{}`))
	s2 := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"rounds","arguments":{},`+
		`"inputResponses":{"step1":{"action":"accept","content":{"name":"A"}}},"requestState":"`+s1["requestState"].(string)+`"`))
	if s2["resultType"] != "input_required" || s2["inputRequests"].(map[string]any)["step2"] == nil || s2["requestState"] == s1["requestState"] {
		t.Fatalf("round 2: %v", s2)
	}
	// Round 3 sends only step2: step1 comes from the state.
	s3 := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"rounds","arguments":{},`+
		`"inputResponses":{"step2":{"action":"accept","content":{"name":"B"}}},"requestState":"`+s2["requestState"].(string)+`"`))
	if s3["resultType"] != "complete" || text(t, s3) != "done" {
		t.Fatalf("round 3: %v", s3)
	}
}

func TestMRTRCapabilities(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	// No elicitation declared: the guest falls back to sampling.
	r := result(t, modernCall(t, srv, Hint{}, "tools/call", `{"sampling":{}}`, `"name":"fallback","arguments":{}`))
	reqs := r["inputRequests"].(map[string]any)
	if len(reqs) != 1 || reqs["llm"] == nil {
		t.Fatalf("fallback: %v", r)
	}
	// Nothing declared: the guest returns the -32021 it got.
	resp := modernCall(t, srv, Hint{}, "tools/call", `{}`, `"name":"needs_sampling","arguments":{}`)
	e := resp["error"].(map[string]any)
	if errCode(resp) != abi.CodeMissingCapability || e["data"].(map[string]any)["requiredCapabilities"].(map[string]any)["sampling"] == nil {
		t.Fatalf("missing capability: %v", resp)
	}
	// URL mode needs elicitation.url.
	var req request
	req.caps, _ = parseCaps([]byte(`{"elicitation":{}}`))
	if e := req.requiredCapability(abi.MethodElicit, []byte(`{"mode":"url","url":"https://x","message":"m"}`)); e == nil || !strings.Contains(string(e.Data), `"url"`) {
		t.Fatalf("url mode: %v", e)
	}
	if e := req.requiredCapability(abi.MethodElicit, []byte(elicitName)); e != nil {
		t.Fatalf("form mode with elicitation {}: %v", e)
	}
	req.caps, _ = parseCaps([]byte(`{"sampling":{}}`))
	if e := req.requiredCapability(abi.MethodSample, []byte(`{"messages":[],"maxTokens":1,"tools":[]}`)); e == nil || !strings.Contains(string(e.Data), `"tools"`) {
		t.Fatalf("sampling tools: %v", e)
	}
}

func TestMRTRPromptResourceAndState(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	p1 := result(t, modernCall(t, srv, Hint{}, "prompts/get", allCaps, `"name":"ctx"`))
	if p1["resultType"] != "input_required" || p1["inputRequests"].(map[string]any)["user_context"] == nil {
		t.Fatalf("prompt round 1: %v", p1)
	}
	p2 := result(t, modernCall(t, srv, Hint{}, "prompts/get", allCaps, `"name":"ctx","requestState":"`+p1["requestState"].(string)+
		`","inputResponses":{"user_context":{"action":"accept","content":{"context":"c"}}}`))
	if p2["resultType"] != "complete" || p2["messages"] == nil {
		t.Fatalf("prompt round 2: %v", p2)
	}
	r1 := result(t, modernCall(t, srv, Hint{}, "resources/read", allCaps, `"uri":"test://r"`))
	if r1["resultType"] != "input_required" {
		t.Fatalf("resource round 1: %v", r1)
	}
	r2 := result(t, modernCall(t, srv, Hint{}, "resources/read", allCaps, `"uri":"test://r","requestState":"`+r1["requestState"].(string)+
		`","inputResponses":{"user_context":{"action":"decline"}}`))
	if r2["resultType"] != "complete" || r2["ttlMs"] != float64(0) || r2["cacheScope"] != "private" {
		t.Fatalf("resource retry must not be cacheable: %v", r2)
	}
	// The guest's own state comes back in _meta on the retry.
	s1 := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"stateful","arguments":{}`))
	s2 := result(t, modernCall(t, srv, Hint{}, "tools/call", allCaps, `"name":"stateful","arguments":{},"requestState":"`+s1["requestState"].(string)+`"`))
	if text(t, s2) != `state {"n":41}` {
		t.Fatalf("guest state: %v", s2)
	}
	// A client may not forge it.
	params := `"name":"stateful","arguments":{}`
	msg, _, _ := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + params + `,"_meta":{"` + MetaProtocolVersion +
		`":"2026-07-28","` + MetaClientCapabilities + `":{},"wasmcp/state":{"n":1}}}}`))
	resp := srv.Handle(context.Background(), nil, msg, nil, Hint{})
	if resp.Code != CodeInvalidParams {
		t.Fatalf("forged guest state: %s", resp.Body)
	}
	// tools/list never answers input_required.
	if l := result(t, modernCall(t, srv, Hint{}, "tools/list", allCaps, "")); l["resultType"] != "complete" {
		t.Fatalf("tools/list: %v", l)
	}
}

func TestLegacyMissingCapability(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	sess := NewSession()
	init, _, _ := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	srv.Handle(context.Background(), sess, init, nil, Hint{})
	msg, _, _ := Decode([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"needs_sampling","arguments":{}}}`))
	resp := srv.Handle(context.Background(), sess, msg, nil, Hint{})
	if resp.Code != abi.CodeMissingCapability || !strings.Contains(string(resp.Body), `"requiredCapabilities":{"sampling":{}}`) {
		t.Fatalf("legacy: %s", resp.Body)
	}
}

// chanStream collects what a request writes on its stream.
type chanStream struct{ ch chan []byte }

func (s chanStream) Send(ctx context.Context, msg []byte) error {
	select {
	case s.ch <- append([]byte(nil), msg...):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func next(t *testing.T, ch chan []byte) map[string]any {
	t.Helper()
	select {
	case b := <-ch:
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message on the stream")
	}
	return nil
}

func TestListen(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	if resp := modernSend(t, srv, Hint{}, nil, "subscriptions/listen", `{}`, `"notifications":{"toolsListChanged":true}`); resp.Code != CodeMethodNotFound {
		t.Fatalf("listen without a stream: %s", resp.Body)
	}
	type open struct {
		ch     chan []byte
		cancel context.CancelFunc
		done   chan Response
	}
	listen := func(filter string, id int) open {
		ch := make(chan []byte, 16)
		ctx, cancel := context.WithCancel(context.Background())
		msg, _, _ := Decode([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"_meta":{"%s":"2026-07-28","%s":{}},"notifications":%s}}`,
			id, MetaProtocolVersion, MetaClientCapabilities, filter)))
		done := make(chan Response, 1)
		go func() { done <- srv.Handle(ctx, nil, msg, chanStream{ch}, Hint{}) }()
		return open{ch, cancel, done}
	}
	tools := listen(`{"toolsListChanged":true,"resourceSubscriptions":["test://r"],"taskIds":["t"]}`, 41)
	ack := next(t, tools.ch)
	if ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first frame: %v", ack)
	}
	ap := ack["params"].(map[string]any)
	if ap["_meta"].(map[string]any)[MetaSubscriptionID] != float64(41) {
		t.Fatalf("ack meta: %v", ap)
	}
	if n, _ := json.Marshal(ap["notifications"]); string(n) != `{"resourceSubscriptions":["test://r"],"toolsListChanged":true}` {
		t.Fatalf("honoured: %s", n)
	}
	prompts := listen(`{"promptsListChanged":true}`, 42)
	next(t, prompts.ch)

	if r := result(t, modernCall(t, srv, Hint{}, "tools/call", `{}`, `"name":"trigger","arguments":{}`)); text(t, r) != "triggered" {
		t.Fatalf("trigger: %v", r)
	}
	n1 := next(t, tools.ch)
	if n1["method"] != "notifications/tools/list_changed" || n1["params"].(map[string]any)["_meta"].(map[string]any)[MetaSubscriptionID] != float64(41) {
		t.Fatalf("tools notification: %v", n1)
	}
	n2 := next(t, tools.ch)
	if n2["method"] != "notifications/resources/updated" || n2["params"].(map[string]any)["uri"] != "test://r" {
		t.Fatalf("update: %v", n2)
	}
	// Nothing else: not the foreign URI, and nothing on the prompts stream.
	select {
	case b := <-tools.ch:
		t.Fatalf("unexpected on the tools stream: %s", b)
	case b := <-prompts.ch:
		t.Fatalf("unexpected on the prompts stream: %s", b)
	case <-time.After(50 * time.Millisecond):
	}
	// The client going away ends the listen with no answer.
	tools.cancel()
	if resp := <-tools.done; resp.Body != nil {
		t.Fatalf("canceled listen answered %s", resp.Body)
	}
	// A server shutdown ends it with the completion result.
	srv.CloseSubscriptions()
	resp := <-prompts.done
	var end map[string]any
	_ = json.Unmarshal(resp.Body, &end)
	res := result(t, end)
	if res["resultType"] != "complete" || res["_meta"].(map[string]any)[MetaSubscriptionID] != float64(42) {
		t.Fatalf("graceful end: %s", resp.Body)
	}
	prompts.cancel()
}

func TestListenStdioCancel(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	sess := NewSession()
	ch := make(chan []byte, 4)
	msg, _, _ := Decode([]byte(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"_meta":{"` + MetaProtocolVersion +
		`":"2026-07-28","` + MetaClientCapabilities + `":{}},"notifications":{"promptsListChanged":true}}}`))
	done := make(chan Response, 1)
	go func() { done <- srv.Handle(context.Background(), sess, msg, chanStream{ch}, Hint{}) }()
	next(t, ch)
	cancel, _, _ := Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}`))
	srv.Handle(context.Background(), sess, cancel, chanStream{ch}, Hint{})
	select {
	case resp := <-done:
		if resp.Body != nil {
			t.Fatalf("answered %s", resp.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/cancelled did not end the listen")
	}
}

func TestListenEndsWithSessionInput(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	sess := NewSession()
	ch := make(chan []byte, 4)
	msg, _, _ := Decode([]byte(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"_meta":{"` + MetaProtocolVersion +
		`":"2026-07-28","` + MetaClientCapabilities + `":{}},"notifications":{"toolsListChanged":true}}}`))
	done := make(chan Response, 1)
	go func() { done <- srv.Handle(context.Background(), sess, msg, chanStream{ch}, Hint{}) }()
	next(t, ch)
	sess.EndListens()
	select {
	case resp := <-done:
		if !strings.Contains(string(resp.Body), `"result":{"resultType":"complete","_meta":{"`+MetaSubscriptionID+`":5`) {
			t.Fatalf("end: %s", resp.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("EndListens did not end the listen")
	}
}

func TestSessionListenerWaitsForInitialize(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	sess := NewSession()
	var mu sync.Mutex
	var got []string
	remove := srv.AddListener(&Listener{Session: sess, Tools: true, Send: func(m []byte) {
		mu.Lock()
		got = append(got, string(m))
		mu.Unlock()
	}})
	defer remove()
	srv.broadcast(abi.MethodToolsListChanged, "")
	init, _, _ := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	srv.Handle(context.Background(), sess, init, nil, Hint{})
	srv.broadcast(abi.MethodToolsListChanged, "")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Fatalf("got %q", got)
	}
}

func TestSealRoundTrip(t *testing.T) {
	s := newSealer([]byte("0123456789abcdef0123456789abcdef"), time.Minute)
	st := &sealedState{Principal: "p", Method: "tools/call", Identity: "i",
		Answers: map[string]json.RawMessage{"k": json.RawMessage(`{"action":"accept"}`)}, Guest: json.RawMessage(`[1]`)}
	tok, err := s.seal(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.unseal(tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Method != "tools/call" || string(got.Answers["k"]) != `{"action":"accept"}` || string(got.Guest) != `[1]` {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := s.unseal(tok[:len(tok)-1]); err == nil {
		t.Fatal("truncated state accepted")
	}
}

// FuzzUnseal feeds arbitrary states to the unsealer: it must never panic,
// and only what the sealer produced may verify.
func FuzzUnseal(f *testing.F) {
	s := newSealer([]byte("fuzz-key-fuzz-key-fuzz-key-fuzz!"), time.Hour)
	// A fixed clock makes the valid token the same in every fuzz worker.
	s.now = func() time.Time { return time.Unix(1_700_000_000, 0) }
	valid, _ := s.seal(&sealedState{Principal: "p", Method: "tools/call", Identity: "x",
		Answers: map[string]json.RawMessage{"a": json.RawMessage(`{"roots":[]}`)}})
	f.Add(valid)
	f.Add(valid + "-TAMPERED")
	f.Add("")
	f.Add("AQ")
	f.Fuzz(func(t *testing.T, tok string) {
		st, err := s.unseal(tok)
		if err != nil {
			return
		}
		// Anything that verifies must re-seal to a state that verifies to the same content.
		again, err := s.seal(st)
		if err != nil {
			t.Fatal(err)
		}
		st2, err := s.unseal(again)
		if err != nil || st2.Method != st.Method || st2.Identity != st.Identity || st2.Principal != st.Principal {
			t.Fatalf("re-sealed state differs: %+v vs %+v (%v)", st2, st, err)
		}
		if tok != valid {
			// Only the sealer's own output verifies, and the strict
			// encoding gives every byte string a single spelling.
			t.Fatalf("a token the sealer did not produce verified: %q", tok)
		}
	})
}
