package tests

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// End-to-end tests of the HTTP transport: wasmcp serve --http on a free
// loopback port, serving the example modules, driven as clients would.

var examples built[string]

// exampleTools builds examples/wasm into a directory shared by the tests.
func exampleTools(t *testing.T) string {
	t.Helper()
	return examples.get(t, func() (string, error) {
		dir := filepath.Join(workDir, "examples")
		_, err := guestbuild.BuildAll(context.Background(), "../examples/wasm", dir)
		return dir, err
	})
}

// compileCache is shared with the packages' tests so each module is
// compiled once per machine.
var compileCache = filepath.Join(os.TempDir(), "wasmcp-test-cache")

func startHTTP(t *testing.T, extra ...string) *served {
	t.Helper()
	args := append([]string{"--tools", exampleTools(t), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false"}, extra...)
	return startServe(t, args...)
}

// exchange is one HTTP request and its whole answer.
type exchange struct {
	status int
	header http.Header
	body   string
}

func httpDo(t *testing.T, method, url string, hdr map[string]string, body string) exchange {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return exchange{resp.StatusCode, resp.Header, string(b)}
}

func modernHeaders(method, name string) map[string]string {
	h := map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": modernVersion, "Mcp-Method": method,
	}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// rpcError is the error code of a JSON-RPC answer, 0 for a result.
func rpcError(t *testing.T, body string) int {
	t.Helper()
	var m struct {
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %q", body)
	}
	if m.Error == nil {
		return 0
	}
	return m.Error.Code
}

func TestHTTPModernEra(t *testing.T) {
	t.Parallel()
	s := startHTTP(t, "--max-body", "64KiB")
	meta := `"_meta":` + modernMeta("")
	ok := func() {
		t.Helper()
		x := httpDo(t, http.MethodPost, s.URL, modernHeaders("server/discover", ""), `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`)
		if x.status != 200 || !strings.Contains(x.body, `"supportedVersions"`) || x.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("server/discover: %d %s", x.status, x.body)
		}
	}
	ok()
	x := httpDo(t, http.MethodPost, s.URL, modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`)
	for _, tool := range []string{"json_query", "text_stats", "hash", "transcode", "confirm_plan"} {
		if !strings.Contains(x.body, `"`+tool+`"`) {
			t.Fatalf("tools/list lacks %s: %s", tool, x.body)
		}
	}

	// Progress streams on SSE; the answer ends the stream.
	c := &httpClient{t: t, url: s.URL}
	var progress int
	final := c.request("tools/call", `{"name":"text_stats","arguments":{"text":"One two. Three four five."}}`, func(string) { progress++ })
	if progress < 4 || !strings.Contains(final, `"resultType":"complete"`) || !strings.Contains(final, `"words":5`) {
		t.Fatalf("text_stats: %d progress, final %s", progress, final)
	}

	// Refusals the spec names, each followed by a working request.
	x = httpDo(t, http.MethodPost, s.URL, modernHeaders("tools/call", "hash"), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"text_stats","arguments":{"text":"x"},`+meta+`}}`)
	if x.status != 400 || rpcError(t, x.body) != -32020 || !strings.Contains(x.body, "Mcp-Name") {
		t.Fatalf("header mismatch: %d %s", x.status, x.body)
	}
	ok()
	hdr := modernHeaders("server/discover", "")
	hdr["Origin"] = "https://evil.example.com"
	if x := httpDo(t, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{`+meta+`}}`); x.status != 403 {
		t.Fatalf("bad Origin: %d %s", x.status, x.body)
	}
	ok()
	big := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"text_stats","arguments":{"text":"` + strings.Repeat("a ", 40000) + `"},` + meta + `}}`
	if x := httpDo(t, http.MethodPost, s.URL, modernHeaders("tools/call", "text_stats"), big); x.status != 413 {
		t.Fatalf("oversized body: %d %s", x.status, x.body)
	}
	ok()
	if x := httpDo(t, http.MethodPost, s.URL, modernHeaders("tools/list", ""), `{"jsonrpc":"2.0",`); x.status != 400 || rpcError(t, x.body) != -32700 {
		t.Fatalf("malformed JSON: %d %s", x.status, x.body)
	}
	ok()
	if x := httpDo(t, http.MethodPost, s.URL, map[string]string{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"},
		`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`); x.status != 400 || rpcError(t, x.body) != -32022 {
		t.Fatalf("unsupported revision: %d %s", x.status, x.body)
	}
	if x := httpDo(t, http.MethodGet, s.URL, map[string]string{"Accept": "text/event-stream"}, ""); x.status != 405 {
		t.Fatalf("GET: %d", x.status)
	}
	ok()
}

func TestHTTPLegacyEra(t *testing.T) {
	t.Parallel()
	s := startHTTP(t)
	accept := "application/json, text/event-stream"
	x := httpDo(t, http.MethodPost, s.URL, map[string]string{"Accept": accept},
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
	sid := x.header.Get("Mcp-Session-Id")
	if x.status != 200 || sid == "" || !strings.Contains(x.body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d %s", x.status, x.body)
	}
	hdr := map[string]string{"Accept": accept, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if x := httpDo(t, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); x.status != 202 {
		t.Fatalf("initialized: %d", x.status)
	}
	if x := httpDo(t, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); x.status != 200 || !strings.Contains(x.body, "confirm_plan") {
		t.Fatalf("tools/list: %d %s", x.status, x.body)
	}

	// The guest's elicitation reaches the client on the POST's SSE stream
	// and the answer, POSTed back, reaches the guest.
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm_plan","arguments":{"plan":"ship it"}}}`))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("tools/call answered %s %s", resp.Header.Get("Content-Type"), b)
	}
	var final string
	readSSE(resp.Body, func(data string) bool {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal([]byte(data), &m)
		switch {
		case m.Method == "elicitation/create":
			answer := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"action":"accept","content":{"approve":true,"comment":"go"}}}`
			if x := httpDo(t, http.MethodPost, s.URL, hdr, answer); x.status != 202 {
				t.Errorf("answer: %d %s", x.status, x.body)
			}
			return true
		case string(m.ID) == "2":
			final = data
			return false
		}
		return true
	})
	if !strings.Contains(final, `accepted: approve=true comment=\"go\"`) {
		t.Fatalf("confirm_plan: %s", final)
	}

	// A wrong MCP-Protocol-Version, a missing and an unknown session.
	bad := map[string]string{"Accept": accept, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01"}
	if x := httpDo(t, http.MethodPost, s.URL, bad, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); x.status != 400 {
		t.Fatalf("bad version: %d", x.status)
	}
	if x := httpDo(t, http.MethodPost, s.URL, map[string]string{"Accept": accept}, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); x.status != 400 {
		t.Fatalf("no session: %d", x.status)
	}
	if x := httpDo(t, http.MethodDelete, s.URL, map[string]string{"Mcp-Session-Id": sid}, ""); x.status != 204 {
		t.Fatalf("DELETE: %d", x.status)
	}
	if x := httpDo(t, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); x.status != 404 {
		t.Fatalf("after DELETE: %d", x.status)
	}
}

// TestHTTPShutdown: SIGTERM ends a server with an open GET stream promptly
// and cleanly.
func TestHTTPShutdown(t *testing.T) {
	t.Parallel()
	s := startHTTP(t, "--shutdown-grace", "5s")
	x := httpDo(t, http.MethodPost, s.URL, nil,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", x.header.Get("Mcp-Session-Id"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	sigtermEndsStream(t, s, resp.Body)
}

// sigtermEndsStream sends SIGTERM to s while stream, an open SSE stream of
// it, is being read: the stream must end and the process exit cleanly,
// well within its grace.
func sigtermEndsStream(t *testing.T, s *served, stream io.Reader) {
	t.Helper()
	start := time.Now()
	exit := make(chan error, 1)
	go func() { exit <- waitExit(s) }()
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	streamEnded := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, stream); close(streamEnded) }()
	select {
	case <-streamEnded:
	case <-time.After(10 * time.Second):
		t.Fatal("the GET stream did not end at shutdown")
	}
	select {
	case err := <-exit:
		if err != nil {
			t.Fatalf("wasmcp exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("wasmcp did not exit after SIGTERM")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
}
