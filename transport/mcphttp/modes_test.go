package mcphttp

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestLegacySSEPair drives the 2024-11-05 HTTP+SSE transport.
func TestLegacySSEPair(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{LegacySSE: true})
	req, _ := http.NewRequest(http.MethodGet, e.ts.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sr := readSSE(resp.Body)
	ev := sr.next(t)
	if ev.name != "endpoint" || !strings.HasPrefix(string(ev.data), "/messages?sessionId=") {
		t.Fatalf("first event %q %q", ev.name, ev.data)
	}
	post := func(body string) reply {
		return e.do(http.MethodPost, e.ts.URL+string(ev.data), map[string]string{"Content-Type": "application/json"}, body)
	}
	if r := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`); r.status != 202 {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	if m := sr.nextMsg(t); m["result"].(map[string]any)["protocolVersion"] != "2024-11-05" {
		t.Fatalf("initialize result: %v", m)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// An elicitation travels on the stream too; the answer is POSTed.
	if r := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}`); r.status != 202 {
		t.Fatalf("tools/call: %d", r.status)
	}
	for {
		m := sr.nextMsg(t)
		if m["method"] == "elicitation/create" {
			post(`{"jsonrpc":"2.0","id":"` + m["id"].(string) + `","result":{"action":"accept","content":{"name":"Cy"}}}`)
			continue
		}
		if m["id"] != nil && m["result"] != nil {
			if text(t, m) != "accept: hello Cy" {
				t.Fatalf("%v", m)
			}
			break
		}
	}
	if r := post(`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"tools/list"}]`); r.status != 202 {
		t.Fatalf("batch: %d", r.status)
	}
	if ev := sr.next(t); !strings.HasPrefix(string(ev.data), "[") {
		t.Fatalf("batch answer %q", ev.data)
	}
	if r := post(`{"jsonrpc":`); r.status != 400 {
		t.Fatalf("malformed: %d", r.status)
	}
	if r := e.do(http.MethodPost, e.ts.URL+"/messages?sessionId=nope", nil, `{}`); r.status != 404 {
		t.Fatalf("unknown session: %d", r.status)
	}
	if r := e.do(http.MethodPost, e.ts.URL+"/messages", nil, `{}`); r.status != 400 {
		t.Fatalf("no session: %d", r.status)
	}
	// The session ends with its stream.
	sid := strings.TrimPrefix(string(ev.data), "/messages?sessionId=")
	resp.Body.Close()
	waitFor(t, "the pair session to end", func() bool {
		e.h.mu.Lock()
		defer e.h.mu.Unlock()
		return e.h.sessions[sid] == nil
	})
	// Off by default.
	e2 := newEnv(t, Options{})
	if r := e2.do(http.MethodGet, e2.ts.URL+"/sse", nil, ""); r.status != 404 {
		t.Fatalf("/sse without LegacySSE: %d", r.status)
	}
}

func TestSimpleMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Mode: Simple})
	r := e.post(map[string]string{"Accept": sseAccept}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if r.status != 200 || r.header.Get("Mcp-Session-Id") != "" || r.errorCode(t) != 0 {
		t.Fatalf("initialize: %d %v %s", r.status, r.header, r.body)
	}
	// Only what the mode can deliver is advertised.
	caps := r.msg(t)["result"].(map[string]any)["capabilities"].(map[string]any)
	if _, ok := caps["logging"]; ok {
		t.Fatalf("simple mode advertises logging: %s", r.body)
	}
	for _, k := range []string{"tools", "resources", "prompts"} {
		if c, _ := caps[k].(map[string]any); c == nil || len(c) != 0 {
			t.Fatalf("simple mode advertises %s %v: %s", k, c, r.body)
		}
	}
	if r := e.post(map[string]string{"MCP-Protocol-Version": "2025-06-18"}, `{"jsonrpc":"2.0","id":9,"method":"resources/subscribe","params":{"uri":"x://y"}}`); !strings.Contains(string(r.body), "not available in simple mode") {
		t.Fatalf("subscribe: %s", r.body)
	}
	r = e.post(map[string]string{"Accept": sseAccept, "MCP-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","arguments":{},"_meta":{"progressToken":1}}}`)
	if r.header.Get("Content-Type") != "application/json" || text(t, r.msg(t)) != "stepped" {
		t.Fatalf("steps: %s", r.body)
	}
	// No requests to the client in this mode.
	r = e.post(map[string]string{"Accept": sseAccept}, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	if res, _ := r.msg(t)["result"].(map[string]any); r.status != 200 || (res != nil && res["isError"] != true) ||
		!strings.Contains(string(r.body), "not available in simple mode") {
		t.Fatalf("ask: %s", r.body)
	}
	r = e.post(modern("tools/call", "steps"), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps",`+meta(`"progressToken":1`)+`}}`)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || r.msg(t)["result"].(map[string]any)["resultType"] != "complete" {
		t.Fatalf("modern: %d %s", r.status, r.body)
	}
	if r := e.post(modern("ping", ""), `{"jsonrpc":"2.0","id":4,"method":"ping","params":{`+meta("")+`}}`); r.status != 404 {
		t.Fatalf("modern ping: %d", r.status)
	}
	if r := e.post(nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != 202 {
		t.Fatalf("notification: %d", r.status)
	}
	resp := e.open(context.Background(), http.MethodGet, map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "x"}, "")
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST, OPTIONS" {
		t.Fatalf("GET: %d %v", resp.StatusCode, resp.Header)
	}
	if r := e.post(map[string]string{"MCP-Protocol-Version": "2025-03-26"}, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`); r.status != 200 || !strings.HasPrefix(string(r.body), "[") {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
}
