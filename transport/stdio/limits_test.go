package stdio

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/protocol"
)

// askingModule's one tool asks the client (elicitation/create) and reports
// the error its request ended with.
type askingModule struct{ asked, failed chan error }

func (m *askingModule) Name() string { return "ask" }
func (m *askingModule) Description() *abi.Description {
	return &abi.Description{ABIVersion: 1, Tools: []abi.Tool{{Name: "ask"}}}
}
func (m *askingModule) Schemas(string) (contract.ToolSchemas, bool) {
	return contract.ToolSchemas{}, true
}
func (m *askingModule) Call(ctx context.Context, _ string, _ []byte, p contract.Peer) (*contract.Reply, error) {
	_, err := p.Request(ctx, "elicitation/create", []byte(`{"message":"name?","requestedSchema":{"type":"object","properties":{}}}`))
	m.failed <- err
	return &contract.Reply{Result: []byte(`{"content":[],"isError":true}`)}, nil
}

// TestEOFFailsRequestsToTheClient: at stdin EOF the requests guests sent
// to the client fail at once and Serve returns, instead of waiting for the
// calls' deadlines.
func TestEOFFailsRequestsToTheClient(t *testing.T) {
	mod := &askingModule{failed: make(chan error, 1)}
	srv := protocol.NewServer(protocol.Options{})
	cat, _ := protocol.NewCatalog([]protocol.Module{mod}, nil)
	srv.SetCatalog(cat)
	s := startWith(t, srv, Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	s.next()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	if m := s.next(); m["method"] != "elicitation/create" {
		t.Fatalf("want the elicitation, got %v", m)
	}
	start := time.Now()
	s.in.Close() // the client goes away without answering
	go func() {
		for s.out.Scan() { // drain what the server still writes
		}
	}()
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still waits for the gone client")
	}
	if err := <-mod.failed; err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("the request to the client ended with %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Serve took %v to return after EOF", d)
	}
}

// TestStdioBatchCap: a batch over MaxBatch is refused with -32600.
func TestStdioBatchCap(t *testing.T) {
	s, _ := start(t, Options{MaxBatch: 2})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.next()
	els := make([]string, 3)
	for i := range els {
		els[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+10)
	}
	s.send("[" + strings.Join(els, ",") + "]")
	if m := s.next(); m["error"] == nil || m["error"].(map[string]any)["code"] != float64(-32600) {
		t.Fatalf("batch over the cap: %v", m)
	}
	s.send("[" + strings.Join(els[:2], ",") + "]")
	if !s.out.Scan() || !strings.HasPrefix(s.out.Text(), "[") {
		t.Fatalf("batch at the cap: %s", s.out.Text())
	}
	s.in.Close()
	<-s.done
}
