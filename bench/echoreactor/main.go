// Command echoreactor is the echo tool of the reference tool sets
// (examples/reference/*: the text back as text and as structured content
// {text}) as a Go reactor, which the host runs from a snapshot: the
// wasmcp+GoR server of bench/scripts.sh, beside the same echo as a script
// (bench/scripts/echo.js) and on the official TypeScript SDK (bench/nodesdk).
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o echo.wasm .
package main

import (
	"encoding/json"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

const text = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

func init() {
	s := guest.New("echo", "1.0.0")
	s.AddRawTool(guest.Tool{Name: "echo", Description: "Returns its text.", InputSchema: text, OutputSchema: text}, echo)
	reactor.Serve(s)
}

func echo(_ *guest.Context, args json.RawMessage) (*guest.ToolResult, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	return &guest.ToolResult{Content: []guest.Content{guest.Text(in.Text)},
		StructuredContent: map[string]string{"text": in.Text}}, nil
}

func main() {}
