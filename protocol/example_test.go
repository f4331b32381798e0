package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/protocol"
)

// greeter is a protocol.Module: what the server needs of a loaded tool
// module. wasmcp's is a WebAssembly module (host.Module behind the
// registry); any implementation will do.
type greeter struct{}

func (greeter) Name() string { return "greeter" }

func (greeter) Description() *abi.Description {
	return &abi.Description{ABIVersion: abi.Version, Name: "greeter", Tools: []abi.Tool{{
		Name: "greet", Description: "Says hello.", InputSchema: json.RawMessage(`{"type":"object"}`),
	}}}
}

func (greeter) Schemas(string) (contract.ToolSchemas, bool) { return contract.ToolSchemas{}, true }

func (greeter) Call(_ context.Context, method string, params []byte, _ contract.Peer) (*contract.Reply, error) {
	return &contract.Reply{Result: []byte(`{"content":[{"type":"text","text":"hello"}]}`)}, nil
}

// A transport decodes each message, hands it to Server.Handle with the
// client's session, and writes the response body Handle built.
func Example() {
	ctx := context.Background()
	srv := protocol.NewServer(protocol.Options{Name: "example", Version: "1.0.0"})
	cat, _ := protocol.NewCatalog([]protocol.Module{greeter{}}, nil)
	srv.SetCatalog(cat)
	sess := protocol.NewSession()

	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}`,
	} {
		msg, _, perr := protocol.Decode([]byte(line))
		if perr != nil {
			fmt.Println("refused:", perr.Message)
			continue
		}
		resp := srv.Handle(ctx, sess, msg, nil, protocol.Hint{})
		if resp.Body == nil {
			continue // a notification has no answer
		}
		var m struct {
			Result map[string]any `json:"result"`
			Error  *abi.Error     `json:"error"`
		}
		_ = json.Unmarshal(resp.Body, &m)
		switch {
		case m.Error != nil:
			fmt.Println("error:", m.Error.Code)
		case m.Result["protocolVersion"] != nil:
			fmt.Println("initialized:", m.Result["protocolVersion"])
		default:
			fmt.Println("result:", m.Result["content"])
		}
	}
	// Output:
	// initialized: 2025-11-25
	// result: [map[text:hello type:text]]
	// error: -32602
}
