package protocol

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestLoadingAnswersAtOnceAndWaitsPerItem: during the initial load
// initialize waits at most InitializeWait and ping not at all, a call of a tool the catalog
// does not have yet waits for the catalog that brings it, a list waits for
// the end of the load (or its bound), and an unknown tool is unknown once
// the load ends.
func TestLoadingAnswersAtOnceAndWaitsPerItem(t *testing.T) {
	full := newTestServer(t, 0).Catalog()
	s := NewServer(Options{Name: "test", Version: "1.0"})
	done := s.StartLoading(0)
	if !s.Loading() {
		t.Fatal("Loading is false after StartLoading")
	}
	sess := initialized(t, s, "2025-11-25") // would block the test were it held to the load's end
	if r := handle(t, s, sess, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil); r.Code != 0 {
		t.Fatalf("ping: %s", r.Body)
	}
	type answer struct {
		name string
		r    Response
	}
	answers := make(chan answer, 3)
	send := func(name, line string) {
		msg, _, perr := Decode([]byte(line))
		if perr != nil {
			t.Fatal(perr)
		}
		if !s.AwaitsLoad(msg) {
			t.Errorf("%s: AwaitsLoad is false during the load", name)
		}
		go func() { answers <- answer{name, s.Handle(context.Background(), sess, msg, nil, Hint{})} }()
	}
	send("call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	send("list", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	send("unknown", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	select {
	case a := <-answers:
		t.Fatalf("%s answered before its module loaded: %s", a.name, a.r.Body)
	case <-time.After(100 * time.Millisecond):
	}
	s.SetCatalog(full) // the module with echo has loaded; the load goes on
	select {
	case a := <-answers:
		if a.name != "call" || !strings.Contains(string(a.r.Body), `echo {\"text\":\"x\"}`) {
			t.Fatalf("first answer after the module loaded: %s %s", a.name, a.r.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not proceed once its module loaded")
	}
	select {
	case a := <-answers:
		t.Fatalf("%s answered before the load ended: %s", a.name, a.r.Body)
	case <-time.After(100 * time.Millisecond):
	}
	done()
	done() // twice is fine
	got := map[string]string{}
	for range 2 {
		select {
		case a := <-answers:
			got[a.name] = string(a.r.Body)
		case <-time.After(10 * time.Second):
			t.Fatal("requests still held after the load ended")
		}
	}
	if !strings.Contains(got["list"], `"name":"echo"`) {
		t.Errorf("tools/list after the load: %s", got["list"])
	}
	if !strings.Contains(got["unknown"], "Unknown tool: nope") {
		t.Errorf("unknown tool after the load: %s", got["unknown"])
	}
	if s.Loading() {
		t.Error("Loading is true after done")
	}
}

// TestLoadingListWaitIsBounded: a list waits at most listWait, then lists
// what is loaded.
func TestLoadingListWaitIsBounded(t *testing.T) {
	s := NewServer(Options{Name: "test", Version: "1.0"})
	done := s.StartLoading(50 * time.Millisecond)
	defer done()
	sess := initialized(t, s, "2025-11-25")
	start := time.Now()
	r := handle(t, s, sess, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)
	if waited := time.Since(start); waited < 50*time.Millisecond || r.Code != 0 || !strings.Contains(string(r.Body), `"tools":[]`) {
		t.Fatalf("tools/list during the load: after %s: %s", waited, r.Body)
	}
}

// TestLoadingCutAtShutdown: a call waiting for a module still loading when
// the server shuts down is answered with a shutdown error, not as an
// unknown tool (-32602) the client would take for a wrong name.
func TestLoadingCutAtShutdown(t *testing.T) {
	s := NewServer(Options{Name: "test", Version: "1.0"})
	done := s.StartLoading(0)
	sess := initialized(t, s, "2025-11-25")
	msg, _, perr := Decode([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`))
	if perr != nil {
		t.Fatal(perr)
	}
	got := make(chan Response, 1)
	go func() { got <- s.Handle(context.Background(), sess, msg, nil, Hint{}) }()
	time.Sleep(50 * time.Millisecond)
	s.InterruptLoading()
	done()
	select {
	case r := <-got:
		if r.Code != CodeInternalError || !strings.Contains(string(r.Body), "shutting down") {
			t.Fatalf("a call cut by shutdown: %s", r.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call was not answered")
	}
}
