package mcphttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/protocol"
)

// The test guest (testdata/guests/httpguest) is built and loaded on first
// use, not in TestMain: fuzz workers run TestMain too, and the fuzz target
// here needs no guest.
var (
	guestOnce sync.Once
	guestMod  *host.Module
	guestErr  error
	guestEng  *host.Engine
	guestDir  string
)

func loadGuest() (*host.Module, error) {
	guestOnce.Do(func() {
		ctx := context.Background()
		out := filepath.Join(guestDir, "httpguest.wasm")
		if guestErr = guestbuild.Build(ctx, "testdata/guests/httpguest", out); guestErr != nil {
			return
		}
		wasm, err := os.ReadFile(out)
		if err != nil {
			guestErr = err
			return
		}
		if guestEng, guestErr = host.NewEngine(host.Config{CacheDir: testCache, Logger: quiet}); guestErr != nil {
			return
		}
		guestMod, guestErr = guestEng.Load(ctx, "httpguest", wasm, host.Policy{})
	})
	return guestMod, guestErr
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testCache is the compilation cache shared with the other packages'
// tests, so the guest is compiled once (compiling is slow under -race).
var testCache = filepath.Join(os.TempDir(), "wasmcp-test-cache")

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcphttp-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	guestDir = dir
	code := m.Run()
	if guestEng != nil {
		guestEng.Close(context.Background())
	}
	return code
}

// newProtocol is a protocol server over the test guest.
func newProtocol() *protocol.Server {
	srv := protocol.NewServer(protocol.Options{Name: "test", Version: "1", Logger: quiet})
	mod, err := loadGuest()
	if err != nil {
		panic(fmt.Sprintf("the test guest: %v", err))
	}
	cat, _ := protocol.NewCatalog([]protocol.Module{mod}, quiet)
	srv.SetCatalog(cat)
	return srv
}

// env is one handler under test on a loopback listener.
type env struct {
	t   *testing.T
	srv *protocol.Server
	h   *Handler
	ts  *httptest.Server
	url string // …/mcp
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	srv := newProtocol()
	ts := httptest.NewUnstartedServer(nil)
	opts.Addr = ts.Listener.Addr().String()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	h := New(srv, opts)
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return &env{t: t, srv: srv, h: h, ts: ts, url: ts.URL + "/mcp"}
}

// reply is a response read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// msg decodes the body as one JSON-RPC message.
func (r reply) msg(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return m
}

// errorCode is the JSON-RPC error code of the body, 0 for a result.
func (r reply) errorCode(t *testing.T) int {
	t.Helper()
	e, _ := r.msg(t)["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return int(e["code"].(float64))
}

func (e *env) do(method, url string, hdr map[string]string, body string) reply {
	e.t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func (e *env) post(hdr map[string]string, body string) reply {
	e.t.Helper()
	return e.do(http.MethodPost, e.url, hdr, body)
}

// open sends a request and returns the response unread (for streams).
func (e *env) open(ctx context.Context, method string, hdr map[string]string, body string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, e.url, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// meta is a complete 2026-07-28 _meta; extra members are added.
func meta(extra string) string {
	m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	if extra != "" {
		m += "," + extra
	}
	return `"_meta":{` + m + `}`
}

// modern builds the headers of a 2026-07-28 request; name may be "".
func modern(method, name string) map[string]string {
	h := map[string]string{
		"Content-Type":         "application/json",
		"Accept":               "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28",
		"Mcp-Method":           method,
	}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// sseEvent is one event read from a stream.
type sseEvent struct {
	id, name string
	data     []byte
}

// sseReader reads events from a text/event-stream body on a goroutine.
type sseReader struct {
	events   chan sseEvent
	done     chan struct{}
	comments atomic.Int32 // keep-alive lines seen
}

func readSSE(body io.Reader) *sseReader {
	r := &sseReader{events: make(chan sseEvent, 64), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer close(r.events)
		br := bufio.NewReader(body)
		var ev sseEvent
		var data [][]byte
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0:
				if data != nil || ev.id != "" || ev.name != "" {
					ev.data = bytes.Join(data, []byte{'\n'})
					r.events <- ev
				}
				ev, data = sseEvent{}, nil
			case line[0] == ':':
				r.comments.Add(1)
			case bytes.HasPrefix(line, []byte("id:")):
				ev.id = strings.TrimSpace(string(line[3:]))
			case bytes.HasPrefix(line, []byte("event:")):
				ev.name = strings.TrimSpace(string(line[6:]))
			case bytes.HasPrefix(line, []byte("data:")):
				data = append(data, bytes.TrimPrefix(line[5:], []byte(" ")))
			}
		}
	}()
	return r
}

// next returns the next event with data (priming events are skipped).
func (r *sseReader) next(t *testing.T) sseEvent {
	t.Helper()
	for {
		select {
		case ev, ok := <-r.events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if len(ev.data) == 0 && ev.name == "" {
				continue
			}
			return ev
		case <-time.After(20 * time.Second):
			t.Fatal("no event within 20 s")
		}
	}
}

// nextMsg decodes the next event's data as a JSON object.
func (r *sseReader) nextMsg(t *testing.T) map[string]any {
	t.Helper()
	ev := r.next(t)
	var m map[string]any
	if err := json.Unmarshal(ev.data, &m); err != nil {
		t.Fatalf("event %q: %v", ev.data, err)
	}
	return m
}

// ended waits for the stream to end.
func (r *sseReader) ended(t *testing.T) {
	t.Helper()
	for {
		select {
		case ev, ok := <-r.events:
			if !ok {
				return
			}
			if len(ev.data) > 0 {
				t.Fatalf("unexpected event %q", ev.data)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the stream did not end within 20 s")
		}
	}
}

// text is the first text content of a tools/call result message.
func text(t *testing.T, m map[string]any) string {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("no result in %v", m)
	}
	c, _ := res["content"].([]any)
	if len(c) == 0 {
		t.Fatalf("no content in %v", m)
	}
	return c[0].(map[string]any)["text"].(string)
}

// initialize opens a legacy session and returns its id.
func (e *env) initialize(version, caps string) string {
	e.t.Helper()
	r := e.post(map[string]string{"Accept": "application/json, text/event-stream"},
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":`+caps+`,"clientInfo":{"name":"t","version":"1"}}}`)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		e.t.Fatalf("initialize: %d %s (session %q)", r.status, r.body, sid)
	}
	if got := e.post(map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); got.status != 202 {
		e.t.Fatalf("notifications/initialized: %d %s", got.status, got.body)
	}
	return sid
}

// legacyHdr are the headers of a request in a session.
func legacyHdr(sid, accept string) map[string]string {
	return map[string]string{"Mcp-Session-Id": sid, "Accept": accept, "Content-Type": "application/json"}
}

// freePort listens on a free loopback port.
func freePort(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
