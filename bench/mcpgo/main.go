// Command mcpgo is the comparison server of wasmcp's benchmarks: mcp-go's
// Streamable HTTP server (github.com/mark3labs/mcp-go) exposing the same
// word_count tool as examples/c/wordcount and examples/wasm/wordcount, as a
// native Go handler. It declares the same input and output schemas and, like
// wasmcp, validates arguments and structuredContent against them on every
// call, so the servers do the same work per call; only where the tool runs
// differs (in-process Go function here, a fresh WebAssembly instance in
// wasmcp).
//
// Usage: mcpgo [-addr 127.0.0.1:0]. It logs "url=http://ADDR/mcp" on stderr
// once it listens, and serves until SIGINT or SIGTERM. Both protocol eras
// are served on one endpoint (mcp-go decides per request); legacy sessions
// use mcp-go's default session manager.
package main

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/wasmcp/wasmcp/bench/internal/benchserver"
)

// The schemas of examples/c/wordcount's description, verbatim.
const (
	inputSchema  = `{"type":"object","properties":{"text":{"type":"string","description":"The text to count"}},"required":["text"]}`
	outputSchema = `{"type":"object","properties":{"words":{"type":"integer","description":"Runs of bytes that are not ASCII whitespace"},"lines":{"type":"integer","description":"Newline characters, as wc -l counts"},"bytes":{"type":"integer","description":"Length of the text in UTF-8 bytes"}},"required":["words","lines","bytes"]}`
)

func wordCount(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError("text must be a string"), nil
	}
	out := benchserver.Count(text)
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructured(out, string(b)), nil
}

// newServer builds the MCP server with the word_count tool.
func newServer() *server.MCPServer {
	s := server.NewMCPServer("mcpgo-bench", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithInputSchemaValidation(),
		server.WithOutputSchemaValidation())
	s.AddTool(mcp.NewTool("word_count",
		mcp.WithTitleAnnotation("Word count"),
		mcp.WithDescription("Counts the words, lines and bytes of a text, as wc does."),
		mcp.WithRawInputSchema(json.RawMessage(inputSchema)),
		mcp.WithRawOutputSchema(json.RawMessage(outputSchema)),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), wordCount)
	return s
}

func main() {
	benchserver.Main("mcp-go", server.NewStreamableHTTPServer(newServer()))
}
