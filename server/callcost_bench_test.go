package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkServeCall is one tools/call through the whole server as `wasmcp
// serve --http` builds it — listener, connection and header limits,
// Host/Origin checks, the auth guard (--auth none), the tracing wrapper
// with no exporter, era and envelope decode, metrics, the audit line,
// admission, the code and memory budgets, a fresh instance of the C
// word_count guest, output checks, encoding and the write — in this
// process, over a keep-alive loopback connection, one call at a time. Its
// ns/op includes the client's side of the exchange (net/http's client),
// which BenchmarkServeCall/*/client-only measures alone against a server
// that answers a canned response.
//
//	go test ./server -run '^$' -bench ServeCall -benchtime 3000x
//
// docs/performance.md ("The cost of one call") has the table of each
// layer's share and the commands that measure it.
func BenchmarkServeCall(b *testing.B) {
	for _, era := range []string{"legacy", "modern"} {
		for _, v := range []struct {
			name string
			set  func(*Config)
		}{
			{"default", func(*Config) {}},
			{"no-audit", func(c *Config) { c.Auth.AuditCalls = false }},
		} {
			b.Run(era+"/"+v.name, func(b *testing.B) {
				s := startBenchServer(b, v.set)
				c := s.client(b, era)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					c.call(b, int64(i+1))
				}
			})
		}
		b.Run(era+"/client-only", func(b *testing.B) {
			c := cannedServer(b, era)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				c.call(b, int64(i+1))
			}
		})
	}
}

// benchServer is a server as `wasmcp serve --http` runs it, in this
// process.
type benchServer struct {
	url string
}

// benchSink takes the server's log: it finds the listening URL and the
// end of the initial load, then throws the lines away through a real file
// write (/dev/null), as a server writing its log to a file or pipe does.
type benchSink struct {
	mu     sync.Mutex
	null   *os.File
	buf    bytes.Buffer
	url    chan string
	loaded chan struct{}
	found  bool
	done   bool
}

var urlRE = regexp.MustCompile(`url=(http://[^ ]+)`)

func (s *benchSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	if !s.done {
		s.buf.Write(p)
		text := s.buf.String()
		if !s.found {
			if m := urlRE.FindStringSubmatch(text); m != nil {
				s.found = true
				s.url <- m[1]
			}
		}
		if strings.Contains(text, `msg="modules loaded"`) {
			s.done = true
			close(s.loaded)
		}
	}
	s.mu.Unlock()
	return s.null.Write(p)
}

// wordCountDir is a tools directory holding the C word_count example.
func wordCountDir(b *testing.B) string {
	b.Helper()
	wasm, err := os.ReadFile("../examples/c/wordcount/wordcount.wasm")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wordcount.wasm"), wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func startBenchServer(b *testing.B, set func(*Config)) *benchServer {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	sink := &benchSink{null: null, url: make(chan string, 1), loaded: make(chan struct{})}
	cfg := Defaults()
	cfg.Tools, cfg.HTTPAddr, cfg.Watch, cfg.Engine.CacheDir, cfg.Tasks.DataDir = wordCountDir(b), "127.0.0.1:0", false, b.TempDir(), "-"
	cfg.Stdout, cfg.Stderr = io.Discard, sink
	set(&cfg)
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			b.Error("the server did not stop")
		}
		null.Close()
	})
	s := &benchServer{}
	select {
	case s.url = <-sink.url:
	case err := <-done:
		b.Fatalf("serve ended: %v\n%s", err, sink.buf.String())
	case <-time.After(60 * time.Second):
		b.Fatalf("no listening URL in the log:\n%s", sink.buf.String())
	}
	select {
	case <-sink.loaded:
	case <-time.After(60 * time.Second):
		b.Fatalf("the modules did not load:\n%s", sink.buf.String())
	}
	if !strings.HasSuffix(s.url, "/mcp") {
		s.url = strings.TrimSuffix(s.url, "/") + "/mcp"
	}
	return s
}

// benchClient sends word_count calls of one era on one connection.
type benchClient struct {
	hc      *http.Client
	url     string
	era     string
	session string
	body    []byte
	resp    []byte
}

const benchText = "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs."

func (s *benchServer) client(b *testing.B, era string) *benchClient {
	b.Helper()
	c := &benchClient{hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}, url: s.url, era: era}
	b.Cleanup(c.hc.CloseIdleConnections)
	if era == "legacy" {
		init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
		h, body := c.post(b, []byte(init), "initialize")
		c.session = h.Get("Mcp-Session-Id")
		if c.session == "" {
			b.Fatalf("initialize gave no session: %s", body)
		}
		c.post(b, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "notifications/initialized")
	}
	c.call(b, 1) // the first call compiles nothing (the load did) but warms the pools
	return c
}

func (c *benchClient) post(b *testing.B, body []byte, method string) (http.Header, []byte) {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	if c.era == "modern" {
		h["Mcp-Protocol-Version"] = []string{"2026-07-28"}
		h["Mcp-Method"] = []string{method}
		if method == "tools/call" {
			h["Mcp-Name"] = []string{"word_count"}
		}
	} else if c.session != "" {
		h["Mcp-Protocol-Version"] = []string{"2025-06-18"}
		h["Mcp-Session-Id"] = []string{c.session}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	buf := bytes.NewBuffer(c.resp[:0])
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		b.Fatal(err)
	}
	c.resp = buf.Bytes()
	if resp.StatusCode/100 != 2 {
		b.Fatalf("%s: HTTP %d: %s", method, resp.StatusCode, c.resp)
	}
	return resp.Header, c.resp
}

func (c *benchClient) call(b *testing.B, id int64) {
	body := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	body = strconv.AppendInt(body, id, 10)
	body = append(body, `,"method":"tools/call","params":{"name":"word_count","arguments":{"text":"`+benchText+`"}`...)
	if c.era == "modern" {
		body = append(body, `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`...)
	}
	body = append(body, "}}"...)
	c.body = body
	_, resp := c.post(b, body, "tools/call")
	if !bytes.Contains(resp, []byte(`"words`)) || bytes.Contains(resp, []byte(`"isError":true`)) {
		b.Fatalf("call %d: %s", id, resp)
	}
}

// cannedServer answers every POST with a fixed word_count result: the
// client's and net/http's share of BenchmarkServeCall.
func cannedServer(b *testing.B, era string) *benchClient {
	b.Helper()
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"words\":17}"}],"structuredContent":{"words":17}}}`)
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, bufio.NewReader(r.Body))
		w.Header()["Content-Type"] = []string{"application/json"}
		w.Header()["Mcp-Session-Id"] = []string{"s"}
		_, _ = w.Write(answer)
	})
	srv := &http.Server{Handler: mux}
	ln, err := listenLoopback()
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	s := &benchServer{url: fmt.Sprintf("http://%s/mcp", ln.Addr())}
	return s.client(b, era)
}

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
