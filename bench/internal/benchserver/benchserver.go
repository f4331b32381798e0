// Package benchserver is what the comparison servers of wasmcp's
// benchmarks (bench/gosdk, bench/mcpgo) share: the word_count tool's
// counting, exactly as the C and Go guests count, and the command's
// listen-serve-shutdown cycle, so that only the MCP library differs.
package benchserver

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
)

// Counts is word_count's output. The jsonschema tags are the descriptions
// of examples/c/wordcount's output schema (the go-sdk derives its schema
// from them).
type Counts struct {
	Words int `json:"words" jsonschema:"Runs of bytes that are not ASCII whitespace"`
	Lines int `json:"lines" jsonschema:"Newline characters, as wc -l counts"`
	Bytes int `json:"bytes" jsonschema:"Length of the text in UTF-8 bytes"`
}

// Count counts like wc: a word is a maximal run of bytes other than space,
// \t, \n, \v, \f and \r; a line is a newline character.
func Count(text string) Counts {
	out := Counts{Bytes: len(text)}
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

// Main is a comparison server's main: it parses -addr (default
// 127.0.0.1:0), serves handler at /mcp, logs "url=http://ADDR/mcp" on
// stderr once it listens, and serves until SIGINT or SIGTERM. name is the
// server's name in its log.
func Main(name string, handler http.Handler) {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := serve(*addr, name, handler, log); err != nil {
		log.Error(name, "err", err)
		os.Exit(1)
	}
}

func serve(addr, name string, handler http.Handler, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving MCP over HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "server", name)
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
