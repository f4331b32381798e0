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
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The schemas of examples/c/wordcount's description, verbatim.
const (
	inputSchema  = `{"type":"object","properties":{"text":{"type":"string","description":"The text to count"}},"required":["text"]}`
	outputSchema = `{"type":"object","properties":{"words":{"type":"integer","description":"Runs of bytes that are not ASCII whitespace"},"lines":{"type":"integer","description":"Newline characters, as wc -l counts"},"bytes":{"type":"integer","description":"Length of the text in UTF-8 bytes"}},"required":["words","lines","bytes"]}`
)

// counts is word_count's output.
type counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Bytes int `json:"bytes"`
}

// count counts like wc, exactly as the C and Go guests do.
func count(text string) counts {
	out := counts{Bytes: len(text)}
	inWord := false
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			out.Lines++
			inWord = false
		case ' ', '\t', '\v', '\f', '\r':
			inWord = false
		default:
			if !inWord {
				out.Words++
				inWord = true
			}
		}
	}
	return out
}

func wordCount(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError("text must be a string"), nil
	}
	out := count(text)
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
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := serve(*addr, log); err != nil {
		log.Error("mcpgo", "err", err)
		os.Exit(1)
	}
}

func serve(addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(newServer()))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving MCP over HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "server", "mcp-go")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
