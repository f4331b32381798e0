package mcphttp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/protocol"
)

func TestModernJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	r := e.post(modern("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta("")+`}}`)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("tools/list: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	m := r.msg(t)
	res := m["result"].(map[string]any)
	if res["resultType"] != "complete" || res["ttlMs"] == nil || len(res["tools"].([]any)) != 5 {
		t.Fatalf("tools/list result: %s", r.body)
	}
	if r.header.Get("Content-Length") == "" {
		t.Fatal("no Content-Length on a JSON answer")
	}
	if r.header.Get("Mcp-Session-Id") != "" {
		t.Fatal("a modern answer carries a session id")
	}
	r = e.post(with(modern("tools/call", "region"), "Mcp-Param-Region", "eu"), `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"region","arguments":{"region":"eu"},`+meta("")+`}}`)
	m = r.msg(t)
	if r.status != 200 || m["id"] != "a" || text(t, m) != "region=eu" || r.header.Get("Content-Length") == "" {
		t.Fatalf("tools/call: %d %s %v", r.status, r.body, r.header)
	}
	// Without Accept listing SSE, progress is dropped and the answer is JSON.
	r = e.post(with(modern("tools/call", "steps"), "Accept", "application/json"),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps",`+meta(`"progressToken":"p","io.modelcontextprotocol/logLevel":"debug"`)+`}}`)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || text(t, r.msg(t)) != "stepped" {
		t.Fatalf("steps without SSE: %d %s", r.status, r.body)
	}
}

// TestModernValidationOrder follows the order of the dual-era routing of
// the reference server: header missing, _meta, header/body mismatch,
// revision, method.
func TestModernValidationOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	pv := func(v string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	cases := []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
		code   int
	}{
		{"header missing", with(modern("tools/list", ""), "MCP-Protocol-Version", ""),
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta("") + `}}`, 400, -32020},
		{"no _meta", modern("server/discover", ""),
			`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}`, 400, -32602},
		{"no _meta, unknown header revision", with(modern("tools/list", ""), "MCP-Protocol-Version", "v999.0.0"),
			`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, 400, -32602},
		{"no clientCapabilities", modern("server/discover", ""),
			`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 400, -32602},
		{"header differs from body", modern("server/discover", ""),
			`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{` + pv("v999.0.0") + `}}`, 400, -32020},
		{"unsupported revision", with(modern("server/discover", ""), "MCP-Protocol-Version", "v999.0.0"),
			`{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{` + pv("v999.0.0") + `}}`, 400, -32022},
		{"legacy header with _meta", with(modern("server/discover", ""), "MCP-Protocol-Version", "2025-11-25"),
			`{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{` + pv("2025-11-25") + `}}`, 400, -32022},
		{"initialize", modern("initialize", ""),
			`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{` + meta("") + `}}`, 404, -32601},
		{"ping", modern("ping", ""), `{"jsonrpc":"2.0","id":9,"method":"ping","params":{` + meta("") + `}}`, 404, -32601},
		{"resources/subscribe", modern("resources/subscribe", ""),
			`{"jsonrpc":"2.0","id":10,"method":"resources/subscribe","params":{"uri":"x://y",` + meta("") + `}}`, 404, -32601},
		{"unknown method", modern("unknown/method", ""),
			`{"jsonrpc":"2.0","id":11,"method":"unknown/method","params":{` + meta("") + `}}`, 404, -32601},
		{"discover", modern("server/discover", ""),
			`{"jsonrpc":"2.0","id":12,"method":"server/discover","params":{` + meta("") + `}}`, 200, 0},
	}
	for _, c := range cases {
		r := e.post(c.hdr, c.body)
		if r.status != c.status || r.errorCode(t) != c.code {
			t.Errorf("%s: got %d %s, want %d %d", c.name, r.status, r.body, c.status, c.code)
			continue
		}
		if !strings.Contains(c.body, `"id":`) {
			continue
		}
		var want struct{ ID any }
		_ = want
		if m := r.msg(t); m["id"] == nil {
			t.Errorf("%s: the error does not echo the id: %s", c.name, r.body)
		}
	}
	r := e.post(with(modern("server/discover", ""), "MCP-Protocol-Version", "v999.0.0"),
		`{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{`+pv("v999.0.0")+`}}`)
	data := r.msg(t)["error"].(map[string]any)["data"].(map[string]any)
	if data["requested"] != "v999.0.0" || len(data["supported"].([]any)) == 0 {
		t.Fatalf("-32022 data: %s", r.body)
	}
}

func TestModernSSEProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	resp := e.open(context.Background(), http.MethodPost, modern("tools/call", "steps"),
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"steps",`+meta(`"progressToken":"tok","io.modelcontextprotocol/logLevel":"info"`)+`}}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	sr := readSSE(resp.Body)
	progress, logs := 0, 0
	for {
		ev := sr.next(t)
		if ev.id != "" {
			t.Fatalf("a modern event has an id: %q", ev.id)
		}
		m := map[string]any{}
		if err := jsonUnmarshal(ev.data, &m); err != nil {
			t.Fatal(err)
		}
		switch m["method"] {
		case "notifications/progress":
			progress++
			if p := m["params"].(map[string]any); p["progressToken"] != "tok" || p["progress"].(float64) != float64(progress) {
				t.Fatalf("progress %d: %s", progress, ev.data)
			}
			continue
		case "notifications/message":
			logs++
			continue
		}
		if text(t, m) != "stepped" || m["id"].(float64) != 7 {
			t.Fatalf("final: %s", ev.data)
		}
		break
	}
	if progress != 3 || logs != 3 {
		t.Fatalf("%d progress and %d log notifications, want 3 and 3", progress, logs)
	}
	sr.ended(t)

	// Without a logLevel in _meta there are no log notifications.
	resp = e.open(context.Background(), http.MethodPost, modern("tools/call", "steps"),
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"steps",`+meta(`"progressToken":"tok"`)+`}}`)
	sr = readSSE(resp.Body)
	for {
		m := sr.nextMsg(t)
		if m["method"] == "notifications/message" {
			t.Fatal("a log notification without logLevel")
		}
		if m["id"] != nil {
			break
		}
	}
}

func TestModernVerbsAndNotifications(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	if r := e.do(http.MethodGet, e.url, map[string]string{"Accept": "text/event-stream"}, ""); r.status != 405 || r.header.Get("Allow") == "" {
		t.Fatalf("GET: %d %v", r.status, r.header)
	}
	if r := e.do(http.MethodDelete, e.url, nil, ""); r.status != 405 {
		t.Fatalf("DELETE: %d", r.status)
	}
	r := e.post(modern("notifications/cancelled", ""), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,`+meta("")+`}}`)
	if r.status != 202 || len(r.body) != 0 {
		t.Fatalf("notification: %d %q", r.status, r.body)
	}
	if r := e.do(http.MethodPut, e.url, nil, ""); r.status != 405 {
		t.Fatalf("PUT: %d", r.status)
	}
	if r := e.do(http.MethodPost, e.ts.URL+"/other", nil, "{}"); r.status != 404 {
		t.Fatalf("other path: %d", r.status)
	}
}

// TestModernDisconnectCancels: closing the response stream cancels the
// call, so the handler returns long before the guest would have.
func TestModernDisconnectCancels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spin","arguments":{"ms":30000},`+meta("")+`}}`))
		for k, v := range modern("tools/call", "spin") {
			req.Header.Set(k, v)
		}
		resp, err := e.ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	<-done
	if !e.h.wait(10 * time.Second) {
		t.Fatal("the call was not canceled when the client went away")
	}
	// Still serving.
	if r := e.post(modern("tools/list", ""), `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta("")+`}}`); r.status != 200 {
		t.Fatalf("after a disconnect: %d %s", r.status, r.body)
	}
}

func TestAcceptSSEOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	resp := e.open(context.Background(), http.MethodPost, with(modern("tools/list", ""), "Accept", "text/event-stream"),
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta("")+`}}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	sr := readSSE(resp.Body)
	if m := sr.nextMsg(t); m["result"] == nil {
		t.Fatalf("%v", m)
	}
	sr.ended(t)
}

// TestModernListen: subscriptions/listen streams its acknowledgement,
// list changes and keep-alives, and ends with a result at shutdown.
func TestModernListen(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{KeepAlive: 20 * time.Millisecond})
	resp := e.open(context.Background(), http.MethodPost, modern("subscriptions/listen", ""),
		`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+meta("")+`}}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	sr := readSSE(resp.Body)
	if m := sr.nextMsg(t); m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first: %v", m)
	}
	waitFor(t, "keep-alive comments", func() bool { return sr.comments.Load() >= 2 })
	empty, _ := protocol.NewCatalog(nil, quiet)
	e.srv.SetCatalog(empty)
	m := sr.nextMsg(t)
	if m["method"] != "notifications/tools/list_changed" || !strings.Contains(fmt.Sprint(m["params"]), "sub") {
		t.Fatalf("notification: %v", m)
	}
	e.h.BeginShutdown()
	if m := sr.nextMsg(t); m["id"] != "sub" || m["result"] == nil {
		t.Fatalf("final: %v", m)
	}
	sr.ended(t)
	// Without SSE in Accept there is no stream to listen on.
	r := e.post(with(modern("subscriptions/listen", ""), "Accept", "application/json"),
		`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{`+meta("")+`}}`)
	if r.status == 200 || r.errorCode(t) == 0 {
		t.Fatalf("listen without SSE: %d %s", r.status, r.body)
	}
}
