package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/tasks"
)

// listAll follows nextCursor and returns the names (or URIs) listed.
func listAll(t *testing.T, s *Server, sess *Session, method, member, field string, h Hint) []string {
	t.Helper()
	var names []string
	cursor := ""
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		r := handleHint(t, s, sess, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":`+params+`}`, nil, h)
		var out struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(r.Body, &out); err != nil || out.Result == nil {
			t.Fatalf("%s: %s", method, r.Body)
		}
		var items []map[string]any
		_ = json.Unmarshal(out.Result[member], &items)
		for _, it := range items {
			names = append(names, it[field].(string))
		}
		cursor = ""
		_ = json.Unmarshal(out.Result["nextCursor"], &cursor)
		if cursor == "" {
			return names
		}
	}
}

func TestAccessGrants(t *testing.T) {
	s := newTestServer(t, 25)
	// alice may use everything; bob the echo tool, the even numbered
	// extra tools and the plain resource only.
	s.opts.Access = func(ctx context.Context, principal string, mod Module, kind, name string) bool {
		if principal == "alice" {
			return true
		}
		switch kind {
		case ItemTool:
			return name == "echo" || strings.HasPrefix(name, "tool") && (name[len(name)-1]-'0')%2 == 0
		case ItemResource:
			return name == "fake://r"
		}
		return false
	}
	sess := initialized(t, s, "2025-11-25")
	alice, bob := Hint{Principal: "alice"}, Hint{Principal: "bob"}
	for round := 0; round < 2; round++ { // the second round is served from the page cache
		all := listAll(t, s, sess, "tools/list", "tools", "name", alice)
		some := listAll(t, s, sess, "tools/list", "tools", "name", bob)
		if len(all) != 27 {
			t.Fatalf("alice sees %d tools, want 27", len(all))
		}
		if len(some) != 14 || some[0] != "echo" || strings.Contains(strings.Join(some, ","), "typed") {
			t.Fatalf("bob sees %v", some)
		}
		if p := listAll(t, s, sess, "prompts/list", "prompts", "name", bob); len(p) != 0 {
			t.Fatalf("bob sees prompts %v", p)
		}
		if r := listAll(t, s, sess, "resources/list", "resources", "uri", bob); len(r) != 1 {
			t.Fatalf("bob sees resources %v", r)
		}
		if r := listAll(t, s, sess, "resources/templates/list", "resourceTemplates", "uriTemplate", bob); len(r) != 0 {
			t.Fatalf("bob sees templates %v", r)
		}
	}
	// A denied item answers exactly as an unknown one.
	call := func(h Hint, body string) string {
		return string(handleHint(t, s, sess, body, nil, h).Body)
	}
	denied := call(bob, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"typed","arguments":{}}}`)
	unknown := call(bob, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nosuch","arguments":{}}}`)
	if strings.Replace(denied, "typed", "nosuch", 1) != unknown || !strings.Contains(denied, "Unknown tool") {
		t.Fatalf("denied tool: %s; unknown: %s", denied, unknown)
	}
	if got := call(alice, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"typed","arguments":{}}}`); !strings.Contains(got, `"n":1`) {
		t.Fatalf("alice's call: %s", got)
	}
	if got := call(bob, `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p"}}`); !strings.Contains(got, "Unknown prompt") {
		t.Fatalf("bob's prompt: %s", got)
	}
	deniedRes := call(bob, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"fake://t/1"}}`)
	unknownRes := call(bob, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"fake://zz"}}`)
	if strings.Replace(deniedRes, "fake://t/1", "fake://zz", 1) != unknownRes {
		t.Fatalf("denied resource: %s; unknown: %s", deniedRes, unknownRes)
	}
	if got := call(bob, `{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`); !strings.Contains(got, "Unknown prompt") {
		t.Fatalf("bob's completion: %s", got)
	}
}

func TestGuestMeta(t *testing.T) {
	s := newTestServer(t, 0)
	s.opts.GuestMeta = func(ctx context.Context, principal string, mod Module) []byte {
		if principal == "" {
			return nil
		}
		return []byte(`{"name":"` + principal + `"}`)
	}
	mod := s.Catalog().modules[0].(*fakeModule)
	inner := mod.call
	var seen []string
	mod.call = func(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
		seen = append(seen, string(params))
		return inner(ctx, method, params, peer)
	}
	sess := initialized(t, s, "2025-11-25")
	for _, p := range []string{"alice", ""} {
		r := handleHint(t, s, sess, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, nil, Hint{Principal: p})
		if r.Code != 0 {
			t.Fatalf("call: %s", r.Body)
		}
	}
	if len(seen) != 2 || !strings.Contains(seen[0], `"_meta":{"wasmcp/principal":{"name":"alice"}}`) || strings.Contains(seen[1], "wasmcp/principal") {
		t.Fatalf("the guest saw %q", seen)
	}
}

func TestAudit(t *testing.T) {
	s := newTestServer(t, 0)
	var recs []CallRecord
	s.opts.Audit = func(ctx context.Context, rec CallRecord) { recs = append(recs, rec) }
	sess := initialized(t, s, "2025-11-25")
	handleHint(t, s, sess, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"secret-value"}}}`, nil, Hint{Principal: "alice"})
	handleHint(t, s, sess, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"fake://t/404"}}`, nil, Hint{Principal: "bob"})
	if len(recs) != 2 {
		t.Fatalf("records: %+v", recs)
	}
	if r := recs[0]; r.Principal != "alice" || r.Module != "fake" || r.Method != "tools/call" || r.Name != "echo" || r.Outcome != "ok" || r.Duration <= 0 {
		t.Fatalf("tool call record: %+v", r)
	}
	if r := recs[1]; r.Principal != "bob" || r.Name != "fake://t/404" || r.Outcome != "error" {
		t.Fatalf("resource record: %+v", r)
	}
}

func TestAccessSubscriptions(t *testing.T) {
	s := newTestServer(t, 0)
	s.opts.Access = func(ctx context.Context, principal string, mod Module, kind, name string) bool {
		return principal == "alice"
	}
	for _, who := range []string{"alice", "bob"} {
		sess := initialized(t, s, "2025-11-25")
		r := handleHint(t, s, sess, `{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"fake://r"}}`, nil, Hint{Principal: who})
		if r.Code != 0 {
			t.Fatalf("%s subscribe: %s", who, r.Body)
		}
		if got := sess.Subscribed("fake://r"); got != (who == "alice") {
			t.Fatalf("%s subscribed: %v", who, got)
		}
	}
}

// TestTaskNotificationsOwner: a listen stream naming another principal's
// task gets nothing of it, as for an unknown task id.
func TestTaskNotificationsOwner(t *testing.T) {
	s := newTestServer(t, 0)
	got := map[string]int{}
	for _, who := range []string{"alice", "bob"} {
		who := who
		remove := s.AddListener(&Listener{Principal: who, Tasks: map[string]bool{"t1": true},
			Send: func([]byte) { got[who]++ }})
		defer remove()
	}
	s.taskChanged(&tasks.Task{ID: "t1", Owner: "alice", Era: contract.Modern, Status: tasks.Working})
	if got["alice"] != 1 || got["bob"] != 0 {
		t.Fatalf("notifications: %v", got)
	}
}

// TestClientCannotForgeHostMeta: a client's _meta keys with the host's
// prefix never reach a guest — not a forged principal (spelled out or
// with JSON escapes), not a forged state — whether or not the host adds
// a principal of its own; the client's other _meta keys stay (issue 25
// item 6).
func TestClientCannotForgeHostMeta(t *testing.T) {
	for _, expose := range []bool{false, true} {
		s := newTestServer(t, 0)
		if expose {
			s.opts.GuestMeta = func(ctx context.Context, principal string, mod Module) []byte {
				return []byte(`{"name":"` + principal + `","scopes":[]}`)
			}
		}
		mod := s.Catalog().modules[0].(*fakeModule)
		inner := mod.call
		var seen []string
		mod.call = func(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
			seen = append(seen, string(params))
			return inner(ctx, method, params, peer)
		}
		sess := initialized(t, s, "2025-11-25")
		forged := []string{
			`{"wasmcp/principal":{"name":"alice","scopes":["admin"]},"keep":1}`,
			`{"wasmcp\/principal":{"name":"alice","scopes":["admin"]},"keep":1}`,
			`{"\u0077asmcp/principal":{"name":"alice","scopes":["admin"]},"keep":1}`,
			`{"wasmcp/anything":"x","keep":1}`,
			// Go's encoding/json matches a struct field in any case, with
			// Unicode folding (U+017F folds to 's').
			`{"WASMCP/Principal":{"name":"alice"},"keep":1}`,
			`{"wa\u017fmcp/principal":{"name":"alice"},"keep":1}`,
			"{\"wa\u017fmcp/principal\":{\"name\":\"alice\"},\"keep\":1}",
		}
		// A second _meta spelled in another case is refused before any
		// guest runs: the host and a guest would read different ones.
		seen = nil
		resp := handleHint(t, s, sess, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"keep":1},"_Meta":{"wasmcp/principal":{"name":"alice"}}}}`, nil, Hint{Principal: "bob"})
		if len(seen) != 0 || !strings.Contains(string(resp.Body), "-32602") || !strings.Contains(string(resp.Body), "given twice") {
			t.Fatalf("expose=%v: _meta and _Meta: %s (the guest ran %d times)", expose, resp.Body, len(seen))
		}
		for i, m := range forged {
			seen = nil
			for _, body := range []string{
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":` + m + `}}`,
				`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p","_meta":` + m + `}}`,
				`{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""},"_meta":` + m + `}}`,
			} {
				handleHint(t, s, sess, body, nil, Hint{Principal: "bob"})
			}
			if len(seen) != 3 {
				t.Fatalf("expose=%v forged %d: the guest ran %d times", expose, i, len(seen))
			}
			for _, p := range seen {
				var got struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				}
				if err := json.Unmarshal([]byte(p), &got); err != nil {
					t.Fatalf("guest params %s: %v", p, err)
				}
				var all map[string]json.RawMessage
				_ = json.Unmarshal([]byte(p), &all)
				if v, ok := all["_Meta"]; ok && strings.Contains(string(v), "alice") {
					t.Fatalf("expose=%v forged %d: _Meta kept the host key: %s", expose, i, p)
				}
				if strings.Contains(p, "alice") {
					t.Fatalf("expose=%v forged %d: the forged principal reached the guest: %s", expose, i, p)
				}
				if string(got.Meta["keep"]) != "1" {
					t.Fatalf("expose=%v: the client's own key was lost: %s", expose, p)
				}
				for k, v := range got.Meta {
					if strings.HasPrefix(strings.ToLower(k), "wasmcp/") && !(expose && k == MetaPrincipal && string(v) == `{"name":"bob","scopes":[]}`) {
						t.Fatalf("expose=%v forged %d: the guest saw %s=%s in %s", expose, i, k, v, p)
					}
				}
				if expose && got.Meta[MetaPrincipal] == nil {
					t.Fatalf("the host's principal is missing: %s", p)
				}
			}
		}
	}
}

// TestInstructionsFollowGrant: a module whose every item the caller may
// not use is absent from the instructions of initialize and
// server/discover (the discover answer is then private), as it is from
// the lists; a module with no item at all keeps its section.
func TestInstructionsFollowGrant(t *testing.T) {
	tool := func(name string) []abi.Tool {
		return []abi.Tool{{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}}
	}
	mods := []Module{
		&fakeModule{name: "open", desc: &abi.Description{ABIVersion: 1, Instructions: "use open", Tools: tool("o")}, call: noCall},
		&fakeModule{name: "secret", desc: &abi.Description{ABIVersion: 1, Instructions: "use secret", Tools: tool("s")}, call: noCall},
		&fakeModule{name: "bare", desc: &abi.Description{ABIVersion: 1, Instructions: "just words"}, call: noCall},
	}
	s := NewServer(Options{Name: "test", Version: "1.0", PageSize: 10, Instructions: "operator words",
		Access: func(ctx context.Context, principal string, mod Module, kind, name string) bool {
			return mod.Name() != "secret" || principal == "alice"
		}})
	cat, _ := NewCatalog(mods, nil)
	s.SetCatalog(cat)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	discover := `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}`
	for _, body := range []string{init, discover} {
		bob := string(handleHint(t, s, NewSession(), body, nil, Hint{Principal: "bob"}).Body)
		alice := string(handleHint(t, s, NewSession(), body, nil, Hint{Principal: "alice"}).Body)
		if strings.Contains(bob, "secret") || !strings.Contains(bob, "use open") || !strings.Contains(bob, "just words") || !strings.Contains(bob, "operator words") {
			t.Fatalf("bob's instructions: %s", bob)
		}
		if !strings.Contains(alice, "use secret") {
			t.Fatalf("alice's instructions: %s", alice)
		}
		if body == discover && (!strings.Contains(bob, `"cacheScope":"private"`) || !strings.Contains(alice, `"cacheScope":"private"`)) {
			// alice's answer holds a section bob is not given: a shared
			// cache must not serve it to him (issue 36, 7).
			t.Fatalf("discover cache scopes: bob %s alice %s", bob, alice)
		}
	}
}

// TestToolStepUp: a tools/call of a tool hidden from the caller is
// refused with an *InsufficientScope naming the scopes when a scope would
// allow it (StepUp), and answers as an unknown tool when none would;
// tools/list keeps hiding it either way (issue 25 item 13).
func TestToolStepUp(t *testing.T) {
	s := newTestServer(t, 0)
	s.opts.Access = func(ctx context.Context, principal string, mod Module, kind, name string) bool {
		return principal == "alice" || name != "typed" && name != "echo"
	}
	s.opts.StepUp = func(ctx context.Context, principal string, mod Module, kind, name string) []string {
		if kind == ItemTool && name == "typed" {
			return []string{"admin", "ops"}
		}
		return nil // echo: granted by name only
	}
	sess := initialized(t, s, "2025-11-25")
	bob := Hint{Principal: "bob"}
	r := handleHint(t, s, sess, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"typed","arguments":{}}}`, nil, bob)
	var is *InsufficientScope
	if !errors.As(r.Refusal, &is) || strings.Join(is.Scopes, " ") != "admin ops" || is.Name != "typed" || is.Method != "tools/call" {
		t.Fatalf("refusal %v; body %s", r.Refusal, r.Body)
	}
	if !strings.Contains(string(r.Body), `"scopes":["admin","ops"]`) || r.Code != CodeInvalidParams {
		t.Fatalf("body %s", r.Body)
	}
	r = handleHint(t, s, sess, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, nil, bob)
	if r.Refusal != nil || !strings.Contains(string(r.Body), "Unknown tool: echo") {
		t.Fatalf("a tool no scope would allow: %v %s", r.Refusal, r.Body)
	}
	if l := strings.Join(listAll(t, s, sess, "tools/list", "tools", "name", bob), ","); strings.Contains(l, "typed") || strings.Contains(l, "echo") {
		t.Fatalf("bob's tools/list: %s", l)
	}
	if r := handleHint(t, s, sess, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"typed","arguments":{}}}`, nil, Hint{Principal: "alice"}); r.Refusal != nil || r.Code != 0 {
		t.Fatalf("alice's call: %v %s", r.Refusal, r.Body)
	}
}
