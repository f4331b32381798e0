package mcphttp

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/protocol"
)

const sseAccept = "application/json, text/event-stream"

func TestLegacySessionLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if r := e.post(map[string]string{"Accept": sseAccept}, list); r.status != 400 || r.errorCode(t) != -32600 {
		t.Fatalf("no session: %d %s", r.status, r.body)
	}
	if r := e.post(legacyHdr("nope", sseAccept), list); r.status != 404 {
		t.Fatalf("unknown session: %d %s", r.status, r.body)
	}
	sid := e.initialize("2025-11-25", `{}`)
	for _, c := range sid {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session id %q is not visible ASCII", sid)
		}
	}
	r := e.post(legacyHdr(sid, sseAccept), list)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || r.errorCode(t) != 0 {
		t.Fatalf("tools/list: %d %s", r.status, r.body)
	}
	if res := r.msg(t)["result"].(map[string]any); res["resultType"] != nil {
		t.Fatalf("a legacy result has resultType: %s", r.body)
	}
	if r := e.post(with(legacyHdr(sid, sseAccept), "MCP-Protocol-Version", "2025-06-18"), `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.status != 200 || len(r.msg(t)["result"].(map[string]any)) != 0 {
		t.Fatalf("ping: %d %s", r.status, r.body)
	}
	for _, v := range []string{"2026-07-28", "1999-01-01"} {
		if r := e.post(with(legacyHdr(sid, sseAccept), "MCP-Protocol-Version", v), `{"jsonrpc":"2.0","id":3,"method":"ping"}`); r.status != 400 {
			t.Fatalf("MCP-Protocol-Version %s: %d %s", v, r.status, r.body)
		}
	}
	if r := e.do(http.MethodDelete, e.url, map[string]string{"Mcp-Session-Id": sid}, ""); r.status != 204 {
		t.Fatalf("DELETE: %d", r.status)
	}
	if r := e.post(legacyHdr(sid, sseAccept), list); r.status != 404 {
		t.Fatalf("after DELETE: %d %s", r.status, r.body)
	}
	if r := e.do(http.MethodDelete, e.url, map[string]string{"Mcp-Session-Id": sid}, ""); r.status != 404 {
		t.Fatalf("DELETE again: %d", r.status)
	}
	// A failed initialize mints nothing.
	r = e.post(nil, `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	if r.header.Get("Mcp-Session-Id") != "" || r.errorCode(t) != -32602 {
		t.Fatalf("bad initialize: %s %v", r.body, r.header)
	}
}

func TestLegacySessionOwnership(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	r := e.post(map[string]string{"X-User": "ann"}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := r.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %s", r.body)
	}
	if r := e.post(with(legacyHdr(sid, sseAccept), "X-User", "bob"), `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.status != 404 {
		t.Fatalf("another principal's session: %d", r.status)
	}
	if r := e.post(with(legacyHdr(sid, sseAccept), "X-User", "ann"), `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.status != 200 {
		t.Fatalf("own session: %d %s", r.status, r.body)
	}
}

// TestLegacyElicitationOnPOSTStream: the guest's progress and elicitation
// reach the client on the POST's SSE stream; the client's answer, POSTed
// back, reaches the guest.
func TestLegacyElicitationOnPOSTStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid := e.initialize("2025-11-25", `{"elicitation":{}}`)
	resp := e.open(context.Background(), http.MethodPost, legacyHdr(sid, sseAccept),
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{},"_meta":{"progressToken":9}}}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Mcp-Session-Id") != sid {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	sr := readSSE(resp.Body)
	var askID any
	ids := map[string]bool{}
	for askID == nil {
		ev := sr.next(t)
		if ev.id == "" || ids[ev.id] {
			t.Fatalf("legacy event id %q missing or repeated", ev.id)
		}
		ids[ev.id] = true
		m := map[string]any{}
		_ = jsonUnmarshal(ev.data, &m)
		switch m["method"] {
		case "notifications/progress":
			if m["params"].(map[string]any)["progressToken"].(float64) != 9 {
				t.Fatalf("progress: %s", ev.data)
			}
		case "notifications/message":
		case "elicitation/create":
			askID = m["id"]
		default:
			t.Fatalf("unexpected %s", ev.data)
		}
	}
	answer := `{"jsonrpc":"2.0","id":"` + askID.(string) + `","result":{"action":"accept","content":{"name":"Ann"}}}`
	if r := e.post(legacyHdr(sid, sseAccept), answer); r.status != 202 {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	for {
		m := sr.nextMsg(t)
		if m["id"] != nil {
			if got := text(t, m); got != "accept: hello Ann" {
				t.Fatalf("result %q", got)
			}
			break
		}
	}
	sr.ended(t)
}

// TestLegacyElicitationOnGETStream: when the POST answers plain JSON, the
// request to the client travels on the session's GET stream.
func TestLegacyElicitationOnGETStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid := e.initialize("2025-06-18", `{"elicitation":{}}`)
	get := e.open(context.Background(), http.MethodGet, legacyHdr(sid, "text/event-stream"), "")
	if get.StatusCode != 200 || get.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %v", get.StatusCode, get.Header)
	}
	gs := readSSE(get.Body)
	done := make(chan reply, 1)
	go func() {
		done <- e.post(legacyHdr(sid, "application/json"), `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	}()
	var ask map[string]any
	for ask == nil {
		if m := gs.nextMsg(t); m["method"] == "elicitation/create" {
			ask = m
		}
	}
	if r := e.post(legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","id":"`+ask["id"].(string)+`","result":{"action":"decline"}}`); r.status != 202 {
		t.Fatalf("answer: %d", r.status)
	}
	r := <-done
	if r.header.Get("Content-Type") != "application/json" || text(t, r.msg(t)) != "decline: hello <nil>" {
		t.Fatalf("result: %s", r.body)
	}
}

// TestLegacyNoStreamForRequests: with a JSON answer and no GET stream, a
// request to the client fails at once instead of hanging.
func TestLegacyNoStreamForRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid := e.initialize("2025-06-18", `{"elicitation":{}}`)
	r := e.post(legacyHdr(sid, "application/json"), `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	m := r.msg(t)
	if res := m["result"].(map[string]any); res["isError"] != true || !strings.Contains(text(t, m), "no stream") {
		t.Fatalf("%s", r.body)
	}
}

// TestLegacyReplay: list_changed notifications go on the GET stream; one
// sent while the stream was away is replayed for Last-Event-ID.
func TestLegacyReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid := e.initialize("2025-11-25", `{}`)
	ctx, cancel := context.WithCancel(context.Background())
	get := e.open(ctx, http.MethodGet, legacyHdr(sid, "text/event-stream"), "")
	gs := readSSE(get.Body)
	full := e.srv.Catalog()
	empty, _ := protocol.NewCatalog(nil, quiet)
	e.srv.SetCatalog(empty)
	first := gs.next(t)
	if !strings.Contains(string(first.data), "notifications/tools/list_changed") || first.id == "" {
		t.Fatalf("first event %q %q", first.id, first.data)
	}
	cancel()
	<-gs.done
	waitFor(t, "the GET stream to detach", func() bool {
		s := e.h.lookup(sid, "")
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.get == nil
	})
	e.srv.SetCatalog(full) // sent while no stream is attached
	get = e.open(context.Background(), http.MethodGet, with(legacyHdr(sid, "text/event-stream"), "Last-Event-ID", first.id), "")
	gs = readSSE(get.Body)
	replayed := gs.next(t)
	if !strings.Contains(string(replayed.data), "notifications/tools/list_changed") || replayed.id == first.id {
		t.Fatalf("replayed %q %q after %q", replayed.id, replayed.data, first.id)
	}
	// A new GET replaces the old one; the old one ends.
	get2 := e.open(context.Background(), http.MethodGet, legacyHdr(sid, "text/event-stream"), "")
	gs.ended(t)
	get2.Body.Close()
	if r := e.do(http.MethodGet, e.url, legacyHdr(sid, "application/json"), ""); r.status != 406 {
		t.Fatalf("GET without SSE accept: %d", r.status)
	}
}

// TestLegacyDisconnectIsNotCancel: the POST's client goes away mid-call;
// the call goes on, the client answers the elicitation and resumes the
// POST's stream with Last-Event-ID: the rest of the exchange, response
// included, arrives there exactly once and the resumed stream then ends.
// The standalone GET stream never carries it (the spec: a response goes on
// a GET stream only when resuming that request's stream, and a message on
// one stream only).
func TestLegacyDisconnectIsNotCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid := e.initialize("2025-11-25", `{"elicitation":{}}`)
	get := e.open(context.Background(), http.MethodGet, legacyHdr(sid, "text/event-stream"), "")
	gs := readSSE(get.Body)
	ctx, cancel := context.WithCancel(context.Background())
	resp := e.open(ctx, http.MethodPost, legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	sr := readSSE(resp.Body)
	var askID, lastID string
	for askID == "" {
		ev, ok := <-sr.events
		if !ok {
			t.Fatal("the POST stream ended")
		}
		if ev.id != "" {
			lastID = ev.id
		}
		if len(ev.data) == 0 {
			continue
		}
		m := map[string]any{}
		_ = jsonUnmarshal(ev.data, &m)
		if m["method"] == "elicitation/create" {
			askID = m["id"].(string)
		}
	}
	cancel()
	<-sr.done
	time.Sleep(20 * time.Millisecond) // let the server see the disconnect
	if r := e.post(legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","id":"`+askID+`","result":{"action":"accept","content":{"name":"Bo"}}}`); r.status != 202 {
		t.Fatalf("answer: %d", r.status)
	}
	res := e.open(context.Background(), http.MethodGet, with(legacyHdr(sid, "text/event-stream"), "Last-Event-ID", lastID), "")
	rs := readSSE(res.Body)
	responses := 0
	deadline := time.After(10 * time.Second)
	for ended := false; !ended; {
		var ev sseEvent
		select {
		case ev, ended = <-rs.events:
			ended = !ended
		case <-deadline:
			t.Fatalf("the resumed stream did not end after the response (%d responses)", responses)
		}
		m := map[string]any{}
		if len(ev.data) == 0 {
			continue
		}
		_ = jsonUnmarshal(ev.data, &m)
		if m["id"] != nil && m["result"] != nil {
			if text(t, m) != "accept: hello Bo" {
				t.Fatalf("%v", m)
			}
			responses++
		}
	}
	if responses != 1 {
		t.Fatalf("the resumed stream carried %d responses, want 1", responses)
	}
	// The standalone stream is still attached and carried none of it: its
	// next message is the list change made now.
	full := e.srv.Catalog()
	empty, _ := protocol.NewCatalog(nil, quiet)
	e.srv.SetCatalog(empty)
	defer e.srv.SetCatalog(full)
	if m := gs.nextMsg(t); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("the standalone stream carried %v", m)
	}
	// Resuming again after the response replays the end and closes.
	again := e.open(context.Background(), http.MethodGet, with(legacyHdr(sid, "text/event-stream"), "Last-Event-ID", lastID), "")
	as := readSSE(again.Body)
	if m := as.nextMsg(t); m["id"] == nil || m["result"] == nil {
		t.Fatalf("replayed %v", m)
	}
	as.ended(t)
}

// TestLegacyCancellation: notifications/cancelled and DELETE end a call in
// flight (its POST gets no answer).
func TestLegacyCancellation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid := e.initialize("2025-11-25", `{}`)
	call := func(id string) chan reply {
		ch := make(chan reply, 1)
		go func() {
			ch <- e.post(legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"spin","arguments":{"ms":30000}}}`)
		}()
		return ch
	}
	busy := func(n int32) func() bool {
		return func() bool { return e.h.lookup(sid, "").busy.Load() == n }
	}
	ch := call("11")
	waitFor(t, "the call to start", busy(1))
	time.Sleep(50 * time.Millisecond)
	if r := e.post(legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":11}}`); r.status != 202 {
		t.Fatalf("cancel: %d", r.status)
	}
	select {
	case r := <-ch:
		if r.status != 202 || len(r.body) != 0 {
			t.Fatalf("canceled call answered %d %s", r.status, r.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("notifications/cancelled did not end the call")
	}
	ch = call("12")
	waitFor(t, "the call to start", busy(1))
	time.Sleep(50 * time.Millisecond)
	if r := e.do(http.MethodDelete, e.url, map[string]string{"Mcp-Session-Id": sid}, ""); r.status != 204 {
		t.Fatalf("DELETE: %d", r.status)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("DELETE did not end the call")
	}
}

func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{SessionIdle: 100 * time.Millisecond})
	sid := e.initialize("2025-11-25", `{}`)
	waitFor(t, "the session to expire", func() bool {
		e.h.mu.Lock() // (a request would keep the session alive)
		defer e.h.mu.Unlock()
		return e.h.sessions[sid] == nil
	})
	if r := e.post(legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.status != 404 {
		t.Fatalf("expired session: %d", r.status)
	}
}

func TestBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"bad":1}]`
	old := e.initialize("2025-03-26", `{}`)
	r := e.post(legacyHdr(old, sseAccept), batch)
	var out []map[string]any
	if err := jsonUnmarshal(r.body, &out); err != nil || r.status != 200 || len(out) != 3 {
		t.Fatalf("batch on 2025-03-26: %d %s", r.status, r.body)
	}
	cur := e.initialize("2025-11-25", `{}`)
	if r := e.post(legacyHdr(cur, sseAccept), batch); r.status != 400 || r.errorCode(t) != -32600 {
		t.Fatalf("batch on 2025-11-25: %d %s", r.status, r.body)
	}
	if r := e.post(modern("tools/list", ""), batch); r.status != 400 || r.errorCode(t) != -32600 {
		t.Fatalf("batch without session: %d %s", r.status, r.body)
	}
}

// TestBothErasOneListener interleaves a session and stateless requests.
func TestBothErasOneListener(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid := e.initialize("2025-11-25", `{}`)
	for i := 0; i < 3; i++ {
		if r := e.post(legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); r.status != 200 || r.errorCode(t) != 0 {
			t.Fatalf("legacy: %d %s", r.status, r.body)
		}
		r := e.post(modern("tools/list", ""), `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta("")+`}}`)
		if r.status != 200 || r.msg(t)["result"].(map[string]any)["resultType"] != "complete" {
			t.Fatalf("modern: %d %s", r.status, r.body)
		}
	}
	// A modern request naming a session is that session's (legacy).
	r := e.post(with(modern("tools/list", ""), "Mcp-Session-Id", sid, "MCP-Protocol-Version", ""), `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta("")+`}}`)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	// Legacy server/discover needs no session.
	if r := e.post(nil, `{"jsonrpc":"2.0","id":4,"method":"server/discover"}`); r.status != 200 || r.errorCode(t) != 0 {
		t.Fatalf("discover: %d %s", r.status, r.body)
	}
}
