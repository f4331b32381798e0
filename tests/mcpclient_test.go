package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// Helpers for end-to-end tests: a wasmcp serve process and MCP clients for
// it over stdio and over Streamable HTTP, on the shared harness
// (internal/testkit/e2e).

// served is a running wasmcp serve.
type served = e2e.Serve

// startServe starts wasmcp serve with args (which select the transport)
// and waits for its initial load of the tools directory to end (it serves
// from before; startServeLoading does not wait); for HTTP pass "--http",
// "127.0.0.1:0" and the URL (http or https) is read from the log.
// The process is stopped when the test ends.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	s := startServeLoading(t, args...)
	s.WaitLoaded(t)
	return s
}

// startServeLoading is startServe without waiting for the initial load.
func startServeLoading(t *testing.T, args ...string) *served {
	t.Helper()
	return e2e.StartServe(t, wasmcpBin, nil, args...)
}

// waitFor polls cond every few milliseconds until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	e2e.WaitFor(t, d, what, cond)
}

// mcpClient is what the transport-independent tests need of a client.
type mcpClient interface {
	// request sends a request with params (a JSON object, without _meta)
	// and returns the final JSON-RPC response. With a progress token,
	// notifications/progress for it are passed to onProgress.
	request(method, params string, progress func(msg string)) string
	// notes yields the notifications that belong to no request
	// (list_changed) as raw messages.
	notes() <-chan string
}

// waitNote waits for a notification whose method is method.
func waitNote(t *testing.T, c mcpClient, method string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case msg := <-c.notes():
			if noteMethod(msg) == method {
				return
			}
		case <-deadline:
			t.Fatalf("no %s within %s", method, d)
		}
	}
}

func noteMethod(msg string) string {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal([]byte(msg), &m)
	return m.Method
}

// withMeta inserts a _meta object into a params object.
func withMeta(params, meta string) string { return e2e.WithMeta(params, meta) }

// stdioClient speaks the 2025-11-25 revision over a process's stdin and
// stdout, as one legacy session, failing t.
type stdioClient struct {
	*e2e.StdioClient
	t *testing.T
}

func newStdioClient(t *testing.T, s *served) *stdioClient {
	return newStdioClientCaps(t, s, `{}`)
}

// newStdioClientCaps is newStdioClient declaring the client capabilities
// caps (a JSON object); requests from the server arrive on notes().
func newStdioClientCaps(t *testing.T, s *served, caps string) *stdioClient {
	return &stdioClient{StdioClient: e2e.NewStdioClient(t, s, caps, nil), t: t}
}

func (c *stdioClient) send(line string) { c.Send(c.t, line) }

func (c *stdioClient) request(method, params string, progress func(string)) string {
	return c.Request(c.t, method, params, progress)
}

func (c *stdioClient) notes() <-chan string { return c.Notes() }

// httpClient speaks the 2026-07-28 revision over Streamable HTTP: each
// request is its own POST, and list changes arrive on a
// subscriptions/listen stream opened with the given filter.
type httpClient struct {
	t    *testing.T
	url  string
	next atomic.Int64
	ch   chan string
}

const modernVersion = e2e.ModernVersion

func modernMeta(extra string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{}` + extra + `}`
}

// newHTTPClient opens a listen stream with filter (the
// params.notifications object) and waits for its acknowledgement.
func newHTTPClient(t *testing.T, url, filter string) *httpClient {
	c := &httpClient{t: t, url: url, ch: make(chan string, 1024)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	acked := make(chan struct{})
	id := c.next.Add(1)
	body := `{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"method":"subscriptions/listen","params":` +
		withMeta(`{"notifications":`+filter+`}`, modernMeta("")) + `}`
	resp, err := c.post(ctx, "subscriptions/listen", "", body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("subscriptions/listen: %s %s", resp.Status, b)
	}
	go func() {
		defer resp.Body.Close()
		once := sync.Once{}
		readSSE(resp.Body, func(data string) bool {
			if noteMethod(data) == "notifications/subscriptions/acknowledged" {
				once.Do(func() { close(acked) })
				return true
			}
			select {
			case c.ch <- data:
			default:
			}
			return true
		})
	}()
	select {
	case <-acked:
	case <-time.After(10 * time.Second):
		t.Fatal("subscriptions/listen was not acknowledged")
	}
	return c
}

func (c *httpClient) post(ctx context.Context, method, name, body string) (*http.Response, error) {
	return e2e.Post(ctx, c.url, method, name, body)
}

func (c *httpClient) request(method, params string, progress func(string)) string {
	id := fmt.Sprint(c.next.Add(1))
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal([]byte(params), &p)
	extra := ""
	if progress != nil {
		extra = `,"progressToken":"p` + id + `"`
	}
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + withMeta(params, modernMeta(extra)) + `}`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := c.post(ctx, method, p.Name+p.URI, body)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var final string
	readSSE(resp.Body, func(data string) bool {
		if noteMethod(data) == "notifications/progress" {
			if progress != nil {
				progress(data)
			}
			return true
		}
		if strings.Contains(data, `"id":`+id) {
			final = data
			return false
		}
		return true
	})
	return final
}

func (c *httpClient) notes() <-chan string { return c.ch }

// openLegacySession initializes a 2025-11-25 session over Streamable HTTP
// and opens its GET stream; the returned channel yields the messages that
// stream carries.
func openLegacySession(t *testing.T, url string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	post := func(sid, body string) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize over HTTP: %s, no Mcp-Session-Id", resp.Status)
	}
	resp = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET stream: %s", resp.Status)
	}
	ch := make(chan string, 1024)
	go func() {
		defer resp.Body.Close()
		readSSE(resp.Body, func(data string) bool {
			select {
			case ch <- data:
			default:
			}
			return true
		})
	}()
	return ch
}

// readSSE calls f with the data of each event until f returns false or the
// stream ends.
func readSSE(r io.Reader, f func(data string) bool) { _ = e2e.ReadSSE(r, f) }

// deployFile writes b to dir/name the safe way: a hidden temporary file in
// the same directory, renamed into place.
func deployFile(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	tmp := dir + "/." + name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir+"/"+name); err != nil {
		t.Fatal(err)
	}
}
