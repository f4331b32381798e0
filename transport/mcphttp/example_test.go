package mcphttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// An embedder mounts the MCP endpoint on its own mux beside its other
// routes; Serve does the same on a listener of its own, with the
// connection caps, TLS and HTTP/3.
func ExampleHandler_Routes() {
	srv := protocol.NewServer(protocol.Options{Name: "example", Version: "1.0.0"})
	h := mcphttp.New(srv, mcphttp.Options{LegacySSE: true, AllowedHosts: []string{"127.0.0.1"}})
	defer h.Close()

	mux := http.NewServeMux()
	for _, route := range h.Routes() {
		mux.Handle(route, h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "the embedder's page") })
	fmt.Println(h.Routes())

	ts := httptest.NewServer(mux)
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Mcp-Session-Id") != "")
	// Output:
	// [/mcp /sse /messages]
	// 200 true
}
