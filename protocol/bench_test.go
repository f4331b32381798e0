package protocol

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmcp/wasmcp/host"
)

// BenchmarkHandleToolsCall is Server.Handle serving a tools/call end to
// end, in both eras, with a real module: the C word_count guest
// (examples/c/wordcount, committed) in a fresh instance per call. It
// includes decoding, argument and output schema validation, the guest and
// the encoded response; not the transport.
func BenchmarkHandleToolsCall(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	wasm, err := os.ReadFile(filepath.Join("..", "examples", "c", "wordcount", "wordcount.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	e, err := host.NewEngine(host.Config{CacheDir: b.TempDir(), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	mod, err := e.Load(context.Background(), "wordcount", wasm, host.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	srv := NewServer(Options{Logger: quiet})
	cat, _ := NewCatalog([]Module{mod}, quiet)
	srv.SetCatalog(cat)

	const args = `"name":"word_count","arguments":{"text":"the quick brown fox jumps over the lazy dog\nand runs away"}`
	b.Run("modern", func(b *testing.B) {
		body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		hint := Hint{Version: "2026-07-28"}
		b.ReportAllocs()
		for b.Loop() {
			msg, _, perr := Decode(body)
			if perr != nil {
				b.Fatal(perr)
			}
			resp := srv.Handle(context.Background(), nil, msg, nil, hint)
			if resp.Code != 0 || len(resp.Body) == 0 {
				b.Fatalf("%s", resp.Body)
			}
		}
	})
	b.Run("legacy", func(b *testing.B) {
		sess := NewSession()
		init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		msg, _, _ := Decode(init)
		if resp := srv.Handle(context.Background(), sess, msg, nil, Hint{}); resp.Code != 0 {
			b.Fatalf("initialize: %s", resp.Body)
		}
		msg, _, _ = Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		srv.Handle(context.Background(), sess, msg, nil, Hint{})
		body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + args + `}}`)
		b.ReportAllocs()
		for b.Loop() {
			msg, _, perr := Decode(body)
			if perr != nil {
				b.Fatal(perr)
			}
			resp := srv.Handle(context.Background(), sess, msg, nil, Hint{})
			if resp.Code != 0 || len(resp.Body) == 0 {
				b.Fatalf("%s", resp.Body)
			}
		}
	})
}
