package stdio

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/protocol"
)

// namedModule serves one tool, <name>_call, whose calls wait for release
// when hold is set.
type namedModule struct {
	name    string
	hold    bool
	release chan struct{}
	entered chan struct{}
}

func (m *namedModule) Name() string { return m.name }
func (m *namedModule) Description() *abi.Description {
	return &abi.Description{ABIVersion: 1, Tools: []abi.Tool{{Name: m.name + "_call"}}}
}
func (m *namedModule) Schemas(string) (contract.ToolSchemas, bool) {
	return contract.ToolSchemas{}, true
}
func (m *namedModule) Call(ctx context.Context, _ string, _ []byte, _ contract.Peer) (*contract.Reply, error) {
	if m.hold {
		m.entered <- struct{}{}
		select {
		case <-m.release:
		case <-ctx.Done():
		}
	}
	return &contract.Reply{Result: []byte(`{"content":[{"type":"text","text":"` + m.name + `"}]}`)}, nil
}

// TestFairAcrossModules: a module whose calls fill its workers and its
// queue gets "overloaded" for its next call, while another module's call
// is answered at once — before any of the flood's.
func TestFairAcrossModules(t *testing.T) {
	slow := &namedModule{name: "slow", hold: true, release: make(chan struct{}), entered: make(chan struct{}, 8)}
	fast := &namedModule{name: "fast"}
	srv := protocol.NewServer(protocol.Options{})
	cat, _ := protocol.NewCatalog([]protocol.Module{slow, fast}, nil)
	srv.SetCatalog(cat)
	s := startWith(t, srv, Options{Workers: 2, Queue: 2})
	call := func(id, tool string) {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`)
	}
	for i := 1; i <= 4; i++ { // 2 run, 2 wait
		call(string(rune('0'+i)), "slow_call")
	}
	<-slow.entered
	<-slow.entered
	call("5", "slow_call")
	m := s.next()
	if m["id"] != float64(5) || !strings.Contains(m["error"].(map[string]any)["message"].(string), "overloaded") ||
		!strings.Contains(m["error"].(map[string]any)["message"].(string), "slow") {
		t.Fatalf("the flood's fifth call: %v", m)
	}
	call("6", "fast_call")
	if m := s.next(); m["id"] != float64(6) || m["result"] == nil {
		t.Fatalf("the other module's call waited or failed: %v", m)
	}
	s.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if m := s.next(); m["id"] != float64(7) {
		t.Fatalf("ping waited behind the flood: %v", m)
	}
	close(slow.release)
	for i := 0; i < 4; i++ {
		if m := s.next(); m["result"] == nil {
			t.Fatalf("flood call: %v", m)
		}
	}
	s.in.Close()
	if err := <-s.done; err != nil {
		t.Fatal(err)
	}
}
