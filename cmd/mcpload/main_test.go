package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// wordcountProtocol is a protocol server of the C word_count example,
// and the quiet logger it logs to; its engine closes when the test ends.
func wordcountProtocol(t *testing.T) (*protocol.Server, *slog.Logger) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	wasm, err := os.ReadFile(filepath.Join("..", "..", "examples", "c", "wordcount", "wordcount.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := host.NewEngine(host.Config{CacheDir: "-", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	mod, err := e.Load(context.Background(), "wordcount", wasm, host.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.NewServer(protocol.Options{Logger: quiet})
	cat, _ := protocol.NewCatalog([]protocol.Module{mod}, quiet)
	srv.SetCatalog(cat)
	return srv, quiet
}

// server serves the C word_count example over Streamable HTTP in process.
func server(t *testing.T) string {
	t.Helper()
	srv, quiet := wordcountProtocol(t)
	ts := httptest.NewUnstartedServer(nil)
	h := mcphttp.New(srv, mcphttp.Options{Addr: ts.Listener.Addr().String(), Logger: quiet})
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })
	return ts.URL + "/mcp"
}

func TestLoadBothEras(t *testing.T) {
	url := server(t)
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			cfg := config{URL: url, Clients: 3, Duration: 20 * time.Second, Requests: 30, Timeout: 10 * time.Second,
				Tool: "word_count", Args: json.RawMessage(`{"text": "one two\nthree"}`), Era: era, Version: legacyVersion, PID: os.Getpid()}
			if err := cfg.check(); err != nil {
				t.Fatal(err)
			}
			rep, err := load(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != 30 || rep.Errors != 0 || rep.ToolErrors != 0 || rep.FirstError != "" {
				t.Fatalf("report %+v", rep)
			}
			if rep.RPS <= 0 || rep.P50ms <= 0 || rep.P50ms > rep.P99ms || rep.P99ms > rep.MaxMs || rep.Seconds <= 0 {
				t.Fatalf("figures %+v", rep)
			}
			if rep.ServerRSSPeak <= 0 || rep.ServerRSSEnd <= 0 {
				t.Fatalf("no memory figures from /proc: %+v", rep)
			}
		})
	}
}

func TestErrorsAreCounted(t *testing.T) {
	url := server(t)
	for _, c := range []struct {
		tool, args   string
		toolErr, rpc bool
	}{
		{"no_such_tool", `{}`, false, true},        // JSON-RPC error
		{"word_count", `{"text": 5}`, true, false}, // invalid arguments: a tool error
	} {
		cfg := config{URL: url, Clients: 2, Duration: 20 * time.Second, Requests: 6, Timeout: 10 * time.Second,
			Tool: c.tool, Args: json.RawMessage(c.args), Era: "modern"}
		if err := cfg.check(); err != nil {
			t.Fatal(err)
		}
		rep, err := load(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Requests != 6 || (rep.Errors == 6) != c.rpc || (rep.ToolErrors == 6) != c.toolErr || rep.FirstError == "" {
			t.Fatalf("%s %s: %+v", c.tool, c.args, rep)
		}
	}
	// A legacy handshake against something that is not an MCP server fails
	// the run.
	cfg := config{URL: strings.TrimSuffix(url, "/mcp") + "/nope", Clients: 1, Duration: time.Second, Timeout: 5 * time.Second,
		Tool: "word_count", Args: json.RawMessage(`{}`), Era: "legacy", Version: legacyVersion}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	if _, err := load(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "initialize") {
		t.Fatalf("handshake with a non-MCP endpoint: %v", err)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-url", "http://10.0.0.1:8080/mcp", "-tool", "x"},
		{"-url", "http://example.com/mcp", "-tool", "x"},
		{"-url", "ftp://127.0.0.1/mcp", "-tool", "x"},
		{"-tool", ""},
		{"-tool", "x", "-args", "[1]"},
		{"-tool", "x", "-c", "0"},
		{"-tool", "x", "-d", "31m"},
		{"-tool", "x", "-era", "future"},
	} {
		var out bytes.Buffer
		if err := run(args, &out); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
	for _, h := range []string{"127.0.0.1", "127.1.2.3", "::1", "localhost", "LOCALHOST"} {
		if !loopback(h) {
			t.Errorf("%s is loopback", h)
		}
	}
}

func TestTable(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, r := range []Report{
		{Label: "wasmcp+c", Era: "modern", Clients: 8, Requests: 300, RPS: 3000, P50ms: 1, P90ms: 2, P99ms: 3, MaxMs: 4, ServerCPUus: 300},
		{Label: "mcp-go", Era: "modern", Clients: 8, Requests: 200, RPS: 2000, P50ms: 1, P90ms: 2, P99ms: 3, MaxMs: 4, ServerCPUus: 150},
	} {
		b, _ := json.Marshal(r)
		f := filepath.Join(dir, string(rune('a'+i))+".json")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var out bytes.Buffer
	if err := run([]string{"-table", strings.Join(files, ",")}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"req/s vs mcp-go", "wasmcp+c", "1.50x", "2.00x", "1.00x"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
}
