package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRelay: an HTTP/1.1 client reaches the server's HTTP/3 side through
// the relay; a Host or Origin naming the relay is the server's own, any
// other goes through as sent and the server's checks refuse it.
func TestRelay(t *testing.T) {
	certFile, keyFile := writeCert(t)
	target := serveTLS(t, certFile, keyFile)
	cfg := config{URL: target, Proto: protoHTTP3, CACert: certFile, relay: true, Clients: 1, Duration: time.Minute,
		Args: []byte(`{}`), Era: "modern"}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- relay(ctx, cfg, "127.0.0.1:0", func(a string) { ready <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	addr := <-ready
	url := "http://" + addr + "/mcp"
	c := &http.Client{Timeout: 30 * time.Second}
	post := func(host, origin, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "word_count"} {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"word_count","arguments":{"text":"one two three"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if resp, body := post("", "http://"+addr, call); resp.StatusCode != 200 || !strings.Contains(body, "3") {
		t.Fatalf("through the relay: %d %s", resp.StatusCode, body)
	}
	if resp, body := post("evil.example", "", call); resp.StatusCode != 403 || !strings.Contains(body, "evil.example") {
		t.Fatalf("a foreign Host: %d %s", resp.StatusCode, body)
	}
	if resp, body := post("", "http://evil.example", call); resp.StatusCode != 403 {
		t.Fatalf("a foreign Origin: %d %s", resp.StatusCode, body)
	}
	// An SSE stream comes through event by event: GET without a session
	// is refused by the server, so a legacy session's GET stream is opened
	// and must answer its headers before any event exists.
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize through the relay: %d, no session", resp.StatusCode)
	}
	gctx, gcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer gcancel()
	get, _ := http.NewRequestWithContext(gctx, http.MethodGet, url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("MCP-Protocol-Version", "2025-11-25")
	gresp, err := c.Do(get)
	if err != nil || gresp.StatusCode != 200 || gresp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET stream through the relay: %v %v", gresp, err)
	}
	// The stream's priming event arrives while the stream stays open.
	line, err := bufio.NewReader(gresp.Body).ReadBytes('\n')
	if err != nil || len(bytes.TrimSpace(line)) == 0 {
		t.Fatalf("the GET stream's first line: %q %v", line, err)
	}
	gcancel()
	gresp.Body.Close()
}

func TestRelayFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-relay", "127.0.0.1:0", "-url", "https://127.0.0.1:1/mcp"},                       // HTTP/1.1 to HTTP/1.1
		{"-relay", "0.0.0.0:0", "-http3", "-url", "https://127.0.0.1:1/mcp", "-d", "1s"},   // not loopback
		{"-relay", "127.0.0.1:0", "-http3", "-url", "https://192.0.2.1:1/mcp", "-d", "1s"}, // a remote server
	} {
		var out bytes.Buffer
		if err := run(args, &out); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
}
