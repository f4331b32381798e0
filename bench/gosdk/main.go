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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// in is word_count's input.
type in struct {
	Text string `json:"text" jsonschema:"The text to count"`
}

// counts is word_count's output.
type counts struct {
	Words int `json:"words" jsonschema:"Runs of bytes that are not ASCII whitespace"`
	Lines int `json:"lines" jsonschema:"Newline characters, as wc -l counts"`
	Bytes int `json:"bytes" jsonschema:"Length of the text in UTF-8 bytes"`
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

// newServer builds the MCP server with the word_count tool.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bench", Version: "1.0.0"}, nil)
	readOnly, openWorld := true, false
	mcp.AddTool(s, &mcp.Tool{
		Name:        "word_count",
		Title:       "Word count",
		Description: "Counts the words, lines and bytes of a text, as wc does.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly, IdempotentHint: true, OpenWorldHint: &openWorld},
	}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, counts, error) {
		return nil, count(a.Text), nil
	})
	return s
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := serve(*addr, log); err != nil {
		log.Error("gosdk", "err", err)
		os.Exit(1)
	}
}

func serve(addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := newServer()
	mux := http.NewServeMux()
	// The SDK serves 2026-07-28 requests only from a stateless handler and
	// legacy sessions only from a stateful one: each request goes to the
	// one for its era, both over the same server.
	get := func(*http.Request) *mcp.Server { return srv }
	stateful := mcp.NewStreamableHTTPHandler(get, nil)
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving MCP over HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "server", "go-sdk")
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
