package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// blockingModule answers "quick" at once and holds "slow" until released.
type blockingModule struct{ release, entered chan struct{} }

func (m *blockingModule) Name() string { return "m" }
func (m *blockingModule) Description() *abi.Description {
	return &abi.Description{ABIVersion: 1, Tools: []abi.Tool{{Name: "quick"}, {Name: "slow"}}}
}
func (m *blockingModule) Schemas(string) (contract.ToolSchemas, bool) {
	return contract.ToolSchemas{}, true
}
func (m *blockingModule) Call(ctx context.Context, _ string, params []byte, _ contract.Peer) (*contract.Reply, error) {
	if strings.Contains(string(params), `"slow"`) {
		m.entered <- struct{}{}
		select {
		case <-m.release:
		case <-ctx.Done():
			return nil, &host.GuestError{Module: "m", Kind: host.KindCanceled, Msg: "canceled", Err: context.Cause(ctx)}
		}
	}
	return &contract.Reply{Result: []byte(`{"content":[{"type":"text","text":"ok"}]}`)}, nil
}

type session struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func start(t *testing.T, opts Options) (*session, *blockingModule) {
	mod := &blockingModule{release: make(chan struct{}), entered: make(chan struct{}, 16)}
	srv := protocol.NewServer(protocol.Options{})
	cat, _ := protocol.NewCatalog([]protocol.Module{mod}, nil)
	srv.SetCatalog(cat)
	return startWith(t, srv, opts), mod
}

// startWith serves srv on a pipe pair.
func startWith(t *testing.T, srv *protocol.Server, opts Options) *session {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() { s.done <- Serve(context.Background(), srv, inR, outW, opts); outW.Close() }()
	return s
}

func (s *session) send(line string) {
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) next() map[string]any {
	s.t.Helper()
	if !s.out.Scan() {
		s.t.Fatal("output ended")
	}
	var m map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		s.t.Fatalf("%q: %v", s.out.Text(), err)
	}
	return m
}

func TestConcurrentRequestsAndOrderFreedom(t *testing.T) {
	s, mod := start(t, Options{Workers: 2})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quick","arguments":{}}}`)
	if m := s.next(); m["id"] != float64(2) {
		t.Fatalf("the quick call waited behind the slow one: %v", m)
	}
	close(mod.release)
	if m := s.next(); m["id"] != float64(1) {
		t.Fatalf("got %v", m)
	}
	s.in.Close()
	if err := <-s.done; err != nil {
		t.Fatal(err)
	}
}

func TestOverloadAndOversizeAreRefused(t *testing.T) {
	s, mod := start(t, Options{Workers: 1, Queue: 1, MaxMessage: 256})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-mod.entered // the worker holds call 1; call 2 fills the queue
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	m := s.next()
	if m["id"] != float64(3) || !strings.Contains(m["error"].(map[string]any)["message"].(string), "overloaded") {
		t.Fatalf("third call: %v", m)
	}
	s.send(`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":"` + strings.Repeat("x", 400) + `"}}`)
	m = s.next()
	if m["id"] != float64(4) || m["error"].(map[string]any)["code"] != float64(-32600) {
		t.Fatalf("oversized line: %v", m)
	}
	// The id is read from the end too (a client that writes it last), and
	// is null only when neither end holds it.
	s.send(`{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("x", 9000) + `"},"id":"late"}`)
	if m = s.next(); m["id"] != "late" || m["error"].(map[string]any)["code"] != float64(-32600) {
		t.Fatalf("oversized line, id last: %v", m)
	}
	s.send(`{"jsonrpc":"2.0","method":"ping","params":{"id":5,"pad":"` + strings.Repeat("x", 9000) + `","id":6}}`)
	if m = s.next(); m["id"] != nil {
		t.Fatalf("oversized line, id nested: %v", m)
	}
	close(mod.release)
	for i := 0; i < 2; i++ {
		if m := s.next(); m["result"] == nil {
			t.Fatalf("queued call: %v", m)
		}
	}
	s.in.Close()
	<-s.done
}

func TestBatchesOnlyOnOldRevisions(t *testing.T) {
	s, _ := start(t, Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.next()
	s.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	if m := s.next(); m["error"].(map[string]any)["code"] != float64(-32600) {
		t.Fatalf("batch on 2025-06-18: %v", m)
	}
	s.in.Close()
	<-s.done

	s, _ = start(t, Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.next()
	s.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"quick","arguments":{}}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	if !s.out.Scan() {
		t.Fatal("no batch answer")
	}
	var arr []map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &arr); err != nil || len(arr) != 2 {
		t.Fatalf("batch answer %s: %v", s.out.Bytes(), err)
	}
	s.in.Close()
	<-s.done
}

func TestOversizedLineID(t *testing.T) {
	for _, c := range []struct{ head, tail, want string }{
		{`{"jsonrpc":"2.0","id":12,"method":"x","params":{"a":"`, `"}}`, `12`},
		{` { "id" : "a\"b" , "method"`, ``, `"a\"b"`},
		{`{"jsonrpc":"2.0","params":{"id":1,"x":[{"id":2}],"s":"\"id\":3`, `"},"id":-7}`, `-7`},
		{`{"params":{"id":1,"pad":"`, `","id":2}}`, ``},
		{`{"method":"x","params":{"pad":"`, `"}}`, ``},
		{`{"id":1.5,"pad":"`, `"}`, ``},
		{`[{"id":1}`, ``, ``},
	} {
		e := &tooLong{head: []byte(c.head), tail: []byte(c.tail)}
		if got := string(e.id()); got != c.want {
			t.Errorf("id of %q…%q = %q, want %q", c.head, c.tail, got, c.want)
		}
	}
}
