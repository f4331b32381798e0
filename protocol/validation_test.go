package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

// TestValidationWithinBudget: a call whose argument validation runs past
// the server's validation budget is answered with a tool error at the
// budget, and the guest is not called.
func TestValidationWithinBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"a":{"items":{"$ref":"#/$defs/d10"}}},"$defs":{"d0":{"type":"object"}`)
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, `,"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	b.WriteString(`}}`)
	called := false
	mod := &fakeModule{name: "v", desc: &abi.Description{ABIVersion: 1, Tools: []abi.Tool{{Name: "costly", InputSchema: json.RawMessage(b.String())}}},
		call: func(context.Context, string, []byte, contract.Peer) (*contract.Reply, error) {
			called = true
			return textReply("ran"), nil
		}}
	if s, _ := mod.Schemas("costly"); s.Input == nil {
		t.Fatal("the schema did not compile")
	}
	s := NewServer(Options{ValidationBudget: 5 * time.Millisecond})
	cat, _ := NewCatalog([]Module{mod}, nil)
	s.SetCatalog(cat)
	sess := initialized(t, s, "2025-11-25")
	args := `{"a":[` + strings.Repeat(`{},`, 200) + `{}]}`
	t0 := time.Now()
	r := handle(t, s, sess, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"costly","arguments":`+args+`}}`, nil)
	if el := time.Since(t0); el > 500*time.Millisecond {
		t.Fatalf("answered after %v", el)
	}
	if !strings.Contains(string(r.Body), `"isError":true`) || !strings.Contains(string(r.Body), "did not finish in time") || called {
		t.Fatalf("got %s (guest called: %v)", r.Body, called)
	}
}
