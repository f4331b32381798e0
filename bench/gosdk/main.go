// Command gosdk is a comparison server of wasmcp's benchmarks: the official
// Go SDK's Streamable HTTP server (github.com/modelcontextprotocol/go-sdk)
// exposing the same word_count tool as examples/c/wordcount and
// examples/wasm/wordcount, as a native Go handler. Like wasmcp it validates
// the arguments against the input schema and the structured result
// against the output schema on every call (the SDK does both for a typed
// handler), so only where the tool runs differs.
//
// Usage: gosdk [-addr 127.0.0.1:0]. It logs "url=http://ADDR/mcp" on stderr
// once it listens, and serves until SIGINT or SIGTERM. Both protocol eras
// are served on one endpoint: a request declaring 2026-07-28 goes to the
// SDK's stateless handler, which alone serves that revision, any other to
// its stateful one (legacy sessions).
package main

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wasmcp/wasmcp/bench/internal/benchserver"
)

// in is word_count's input.
type in struct {
	Text string `json:"text" jsonschema:"The text to count"`
}

// newServer builds the MCP server with the word_count tool.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bench", Version: "1.0.0"}, nil)
	readOnly, openWorld := true, false
	mcp.AddTool(s, &mcp.Tool{
		Name:        "word_count",
		Title:       "Word count",
		Description: "Counts the words, lines and bytes of a text, as wc does.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly, IdempotentHint: true, OpenWorldHint: &openWorld},
	}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, benchserver.Counts, error) {
		return nil, benchserver.Count(a.Text), nil
	})
	return s
}

func main() {
	srv := newServer()
	// The SDK serves 2026-07-28 requests only from a stateless handler and
	// legacy sessions only from a stateful one: each request goes to the
	// one for its era, both over the same server.
	get := func(*http.Request) *mcp.Server { return srv }
	stateful := mcp.NewStreamableHTTPHandler(get, nil)
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	benchserver.Main("go-sdk", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}))
}
