package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// End-to-end tests of HTTP/3: wasmcp serve --http3 with a certificate
// from wasmcp cert, driven by quic-go's HTTP/3 client only (a client that
// cannot fall back to TCP), through the same exchanges as the HTTP tests.

var certs built[string]

// devCert makes a certificate with wasmcp cert, once per test binary.
func devCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	dir := certs.get(t, func() (string, error) {
		dir := filepath.Join(workDir, "tls")
		if out, err := exec.Command(wasmcpBin, "cert", "--out", dir, "--days", "1").CombinedOutput(); err != nil {
			return "", fmt.Errorf("wasmcp cert: %v\n%s", err, out)
		}
		return dir, nil
	})
	return filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
}

// startHTTP3 starts wasmcp serve --http3 over tools and returns it once
// the UDP socket is open.
func startHTTP3(t *testing.T, tools string, extra ...string) *served {
	t.Helper()
	cert, key := devCert(t)
	args := append([]string{"--tools", tools, "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false",
		"--tls-cert", cert, "--tls-key", key, "--http3"}, extra...)
	s := startServe(t, args...)
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("serving %s, not https", s.URL)
	}
	waitFor(t, 10*time.Second, "the HTTP/3 listener", func() bool { return strings.Contains(s.Stderr.String(), `msg="serving HTTP/3"`) })
	return s
}

// h3Client speaks HTTP/3 only and trusts the development certificate.
func h3Client(t *testing.T) *http.Client {
	t.Helper()
	cert, _ := devCert(t)
	b, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b) {
		t.Fatal("wasmcp cert wrote no PEM certificate")
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr}
}

// h3Do is httpDo over c, checking the answer came over HTTP/3.
func h3Do(t *testing.T, c *http.Client, method, url string, hdr map[string]string, body string) exchange {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 3 {
		t.Fatalf("%s answered in %s", method, resp.Proto)
	}
	b, _ := io.ReadAll(resp.Body)
	return exchange{resp.StatusCode, resp.Header, string(b)}
}

// h3Open sends a request and returns the response with its body unread.
func h3Open(t *testing.T, ctx context.Context, c *http.Client, method, url string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 3 {
		t.Fatalf("%s answered in %s", method, resp.Proto)
	}
	return resp
}

// sseEvents reads a stream's events (id and data) on a goroutine.
type sseEvent struct{ id, data string }

func sseEvents(r io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		var id string
		var data []string
		buf := make([]byte, 0, 4096)
		tmp := make([]byte, 4096)
		for {
			n, err := r.Read(tmp)
			buf = append(buf, tmp[:n]...)
			for {
				i := strings.IndexByte(string(buf), '\n')
				if i < 0 {
					break
				}
				line := strings.TrimRight(string(buf[:i]), "\r")
				buf = buf[i+1:]
				switch {
				case line == "":
					if id != "" || data != nil {
						ch <- sseEvent{id, strings.Join(data, "\n")}
					}
					id, data = "", nil
				case strings.HasPrefix(line, "id:"):
					id = strings.TrimSpace(line[3:])
				case strings.HasPrefix(line, "data:"):
					data = append(data, strings.TrimPrefix(line[5:], " "))
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// nextData waits for the next event with data.
func nextData(t *testing.T, ch <-chan sseEvent, what string) sseEvent {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("%s: the stream ended", what)
			}
			if ev.data != "" {
				return ev
			}
		case <-deadline:
			t.Fatalf("%s: no event within 30 s", what)
		}
	}
}

func TestHTTP3ModernEra(t *testing.T) {
	t.Parallel()
	s := startHTTP3(t, exampleTools(t), "--max-body", "64KiB")
	c := h3Client(t)
	meta := `"_meta":` + modernMeta("")

	// The TCP side advertises HTTP/3 on the same port number.
	tcp := &http.Client{Transport: &http.Transport{TLSClientConfig: c.Transport.(*http3.Transport).TLSClientConfig, ForceAttemptHTTP2: true}}
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`))
	for k, v := range modernHeaders("server/discover", "") {
		req.Header.Set(k, v)
	}
	resp, err := tcp.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	port := s.URL[strings.LastIndexByte(s.URL, ':')+1 : strings.LastIndexByte(s.URL, '/')]
	if got := resp.Header.Get("Alt-Svc"); resp.ProtoMajor != 2 || got != `h3=":`+port+`"; ma=86400` {
		t.Fatalf("TCP answer %s, Alt-Svc %q", resp.Proto, got)
	}

	ok := func() {
		t.Helper()
		x := h3Do(t, c, http.MethodPost, s.URL, modernHeaders("server/discover", ""), `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`)
		if x.status != 200 || !strings.Contains(x.body, `"supportedVersions"`) {
			t.Fatalf("server/discover: %d %s", x.status, x.body)
		}
	}
	ok()
	// A subscriptions/listen stream is acknowledged at once (flushed).
	listenCtx, endListen := context.WithCancel(context.Background())
	defer endListen()
	listen := h3Open(t, listenCtx, c, http.MethodPost, s.URL, modernHeaders("subscriptions/listen", ""),
		`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+meta+`}}`)
	if ack := nextData(t, sseEvents(listen.Body), "the listen acknowledgement"); noteMethod(ack.data) != "notifications/subscriptions/acknowledged" {
		t.Fatalf("subscriptions/listen: %s", ack.data)
	}
	endListen()
	listen.Body.Close()
	ok()
	// tools/call answered inline (JSON).
	x := h3Do(t, c, http.MethodPost, s.URL, modernHeaders("tools/call", "hash"),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hash","arguments":{"algorithm":"sha256","text":"abc"},`+meta+`}}`)
	if x.status != 200 || !strings.HasPrefix(x.header.Get("Content-Type"), "application/json") ||
		!strings.Contains(x.body, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Fatalf("hash inline: %d %s %s", x.status, x.header.Get("Content-Type"), x.body)
	}
	// Progress over SSE: every event arrives, and the answer ends the
	// stream.
	resp = h3Open(t, context.Background(), c, http.MethodPost, s.URL, modernHeaders("tools/call", "text_stats"),
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"text_stats","arguments":{"text":"One two. Three four five."},"_meta":`+modernMeta(`,"progressToken":"p3"`)+`}}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("text_stats answered %s", resp.Header.Get("Content-Type"))
	}
	var progress int
	var final string
	readSSE(resp.Body, func(data string) bool {
		if noteMethod(data) == "notifications/progress" {
			progress++
			return true
		}
		final = data
		return false
	})
	resp.Body.Close()
	if progress < 4 || !strings.Contains(final, `"resultType":"complete"`) || !strings.Contains(final, `"words":5`) {
		t.Fatalf("text_stats: %d progress, final %s", progress, final)
	}

	// Refusals, each followed by a working request.
	x = h3Do(t, c, http.MethodPost, s.URL, modernHeaders("tools/call", "hash"), `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"text_stats","arguments":{"text":"x"},`+meta+`}}`)
	if x.status != 400 || rpcError(t, x.body) != -32020 || !strings.Contains(x.body, "Mcp-Name") {
		t.Fatalf("header mismatch: %d %s", x.status, x.body)
	}
	ok()
	hdr := modernHeaders("server/discover", "")
	hdr["Origin"] = "https://evil.example.com"
	if x := h3Do(t, c, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{`+meta+`}}`); x.status != 403 {
		t.Fatalf("bad Origin: %d %s", x.status, x.body)
	}
	ok()
	big := `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"text_stats","arguments":{"text":"` + strings.Repeat("a ", 40000) + `"},` + meta + `}}`
	if x := h3Do(t, c, http.MethodPost, s.URL, modernHeaders("tools/call", "text_stats"), big); x.status != 413 {
		t.Fatalf("oversized body: %d %s", x.status, x.body)
	}
	ok()
	if x := h3Do(t, c, http.MethodPost, strings.Replace(s.URL, "127.0.0.1", "localhost", 1), modernHeaders("server/discover", ""),
		`{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{`+meta+`}}`); x.status != 200 {
		t.Fatalf("Host localhost: %d %s", x.status, x.body)
	}
}

// TestHTTP3LegacySession: a 2025-11-25 session over HTTP/3: an elicitation
// on the POST's stream (only a flushed event lets the client answer), a
// request to the client on the GET stream, replayed after Last-Event-ID to
// a new GET stream, DELETE, and shutdown with a GET stream open.
func TestHTTP3LegacySession(t *testing.T) {
	t.Parallel()
	s := startHTTP3(t, exampleTools(t), "--shutdown-grace", "20s")
	c := h3Client(t)
	accept := "application/json, text/event-stream"
	x := h3Do(t, c, http.MethodPost, s.URL, map[string]string{"Accept": accept},
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
	sid := x.header.Get("Mcp-Session-Id")
	if x.status != 200 || sid == "" || !strings.Contains(x.body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d %s", x.status, x.body)
	}
	hdr := map[string]string{"Accept": accept, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if x := h3Do(t, c, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); x.status != 202 {
		t.Fatalf("initialized: %d", x.status)
	}
	answer := func(data, content string) {
		t.Helper()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal([]byte(data), &m)
		if m.Method != "elicitation/create" {
			t.Fatalf("want elicitation/create, got %s", data)
		}
		if x := h3Do(t, c, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"action":"accept","content":`+content+`}}`); x.status != 202 {
			t.Fatalf("answer: %d %s", x.status, x.body)
		}
	}

	// The elicitation on the POST's own SSE stream.
	resp := h3Open(t, context.Background(), c, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm_plan","arguments":{"plan":"ship it"}}}`)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tools/call answered %s", resp.Header.Get("Content-Type"))
	}
	events := sseEvents(resp.Body)
	answer(nextData(t, events, "elicitation").data, `{"approve":true,"comment":"go"}`)
	if final := nextData(t, events, "the answer").data; !strings.Contains(final, `accepted: approve=true comment=\"go\"`) {
		t.Fatalf("confirm_plan: %s", final)
	}
	resp.Body.Close()

	// Requests of calls answered with plain JSON travel on the GET stream.
	getHdr := map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	ctx1, drop1 := context.WithCancel(context.Background())
	get1 := h3Open(t, ctx1, c, http.MethodGet, s.URL, getHdr, "")
	if get1.StatusCode != 200 {
		t.Fatalf("GET: %d", get1.StatusCode)
	}
	g1 := sseEvents(get1.Body)
	jsonHdr := map[string]string{"Accept": "application/json", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	calls := make(chan exchange, 2)
	call := func(id int, plan string) {
		req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"confirm_plan","arguments":{"plan":%q}}}`, id, plan)))
		for k, v := range jsonHdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			calls <- exchange{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		calls <- exchange{resp.StatusCode, resp.Header, string(b)}
	}
	go call(2, "first")
	first := nextData(t, g1, "the first elicitation on the GET stream")
	if first.id == "" || !strings.Contains(first.data, "first") {
		t.Fatalf("first event: %+v", first)
	}
	// The client drops the GET stream; a second elicitation is sent while
	// it is away (or into the stream being torn down): a new GET stream
	// with Last-Event-ID gets it, and not the first again.
	drop1()
	get1.Body.Close()
	go call(3, "second")
	time.Sleep(300 * time.Millisecond)
	getHdr["Last-Event-ID"] = first.id
	get2 := h3Open(t, context.Background(), c, http.MethodGet, s.URL, getHdr, "")
	if get2.StatusCode != 200 {
		t.Fatalf("GET with Last-Event-ID: %d", get2.StatusCode)
	}
	defer get2.Body.Close()
	g2 := sseEvents(get2.Body)
	second := nextData(t, g2, "the replayed elicitation")
	if second.id == first.id || !strings.Contains(second.data, "second") {
		t.Fatalf("replayed %+v after %+v", second, first)
	}
	answer(first.data, `{"approve":true}`)
	answer(second.data, `{"approve":false}`)
	for range 2 {
		select {
		case x := <-calls:
			if x.status != 200 || !strings.Contains(x.body, "approve=") {
				t.Fatalf("a call answered on the GET stream: %d %s", x.status, x.body)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a call whose elicitation was answered did not end")
		}
	}

	// Wrong revision header; DELETE; the session is gone.
	bad := map[string]string{"Accept": accept, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01"}
	if x := h3Do(t, c, http.MethodPost, s.URL, bad, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); x.status != 400 {
		t.Fatalf("bad version: %d", x.status)
	}
	if x := h3Do(t, c, http.MethodDelete, s.URL, map[string]string{"Mcp-Session-Id": sid}, ""); x.status != 204 {
		t.Fatalf("DELETE: %d", x.status)
	}
	if x := h3Do(t, c, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); x.status != 404 {
		t.Fatalf("after DELETE: %d", x.status)
	}

	// SIGTERM with another session's GET stream open over HTTP/3: the
	// stream ends and the process exits well within the grace.
	x = h3Do(t, c, http.MethodPost, s.URL, map[string]string{"Accept": accept},
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	getHdr = map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": x.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	get3 := h3Open(t, context.Background(), c, http.MethodGet, s.URL, getHdr, "")
	defer get3.Body.Close()
	sigtermEndsStream(t, s, get3.Body)
}

// TestHTTP3MRTR: a multi round-trip request over HTTP/3, three POSTs.
func TestHTTP3MRTR(t *testing.T) {
	t.Parallel()
	s := startHTTP3(t, conformanceFixture(t))
	c := h3Client(t)
	const tool = `"name":"test_input_required_result_multi_round","arguments":{}`
	round := func(id int, extra string) map[string]any {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s},%s%s}}`,
			id, everyCap, tool, extra)
		x := h3Do(t, c, http.MethodPost, s.URL, modernHeaders("tools/call", "test_input_required_result_multi_round"), body)
		if x.status != 200 {
			t.Fatalf("round %d: %d %s", id, x.status, x.body)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(x.body), &m); err != nil {
			t.Fatalf("round %d: %s", id, x.body)
		}
		return resultOf(t, m)
	}
	r1 := round(1, "")
	if r1["resultType"] != "input_required" || r1["inputRequests"].(map[string]any)["step1"] == nil {
		t.Fatalf("round 1: %v", r1)
	}
	r2 := round(2, `,"requestState":"`+r1["requestState"].(string)+`","inputResponses":{"step1":{"action":"accept","content":{"name":"Alice"}}}`)
	if r2["resultType"] != "input_required" || r2["inputRequests"].(map[string]any)["step2"] == nil {
		t.Fatalf("round 2: %v", r2)
	}
	r3 := round(3, `,"requestState":"`+r2["requestState"].(string)+`","inputResponses":{"step2":{"action":"accept","content":{"color":"blue"}}}`)
	if content := r3["content"].([]any)[0].(map[string]any); r3["resultType"] != "complete" || content["text"] != "Alice likes blue" {
		t.Fatalf("round 3: %v", r3)
	}
}

// TestHTTP3Tasks: the legacy task scenario (created, polled, input inside a
// task, list, cancel) in a session over HTTP/3.
func TestHTTP3Tasks(t *testing.T) {
	t.Parallel()
	s := startHTTP3(t, taskTools(t), "--data-dir", "-")
	legacyTaskScenario(t, newHTTPLegacyWith(t, s.URL, h3Client(t)))
}

// TestHTTP3EveryEra: every protocol revision the server speaks, over
// HTTP/3 only: the handshake of each session-era revision, tools/list and
// a tools/call answered as JSON and as SSE (with progress), then DELETE;
// the 2026-07-28 era needs no handshake (TestHTTP3ModernEra). The official
// conformance suites also run over HTTP/3 through mcpload -relay
// (CONFORMANCE_HTTP3=1 tests/conformance/run).
func TestHTTP3EveryEra(t *testing.T) {
	t.Parallel()
	s := startHTTP3(t, exampleTools(t))
	c := h3Client(t)
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		x := h3Do(t, c, http.MethodPost, s.URL, map[string]string{"Accept": "application/json, text/event-stream"},
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
		sid := x.header.Get("Mcp-Session-Id")
		if x.status != 200 || sid == "" || !strings.Contains(x.body, `"protocolVersion":"`+v+`"`) {
			t.Fatalf("%s initialize: %d %q %s", v, x.status, sid, x.body)
		}
		hdr := map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": v}
		if x := h3Do(t, c, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); x.status != 202 {
			t.Fatalf("%s initialized: %d %s", v, x.status, x.body)
		}
		if x := h3Do(t, c, http.MethodPost, s.URL, hdr, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); x.status != 200 || !strings.Contains(x.body, `"name":"hash"`) {
			t.Fatalf("%s tools/list: %d %s", v, x.status, x.body)
		}
		jsonHdr := map[string]string{"Accept": "application/json", "Mcp-Session-Id": sid, "MCP-Protocol-Version": v}
		x = h3Do(t, c, http.MethodPost, s.URL, jsonHdr, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hash","arguments":{"algorithm":"sha256","text":"abc"}}}`)
		if x.status != 200 || !strings.HasPrefix(x.header.Get("Content-Type"), "application/json") ||
			!strings.Contains(x.body, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
			t.Fatalf("%s tools/call: %d %s %s", v, x.status, x.header.Get("Content-Type"), x.body)
		}
		resp := h3Open(t, context.Background(), c, http.MethodPost, s.URL, hdr,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"text_stats","arguments":{"text":"One two. Three four five."},"_meta":{"progressToken":"p"}}}`)
		if resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s text_stats answered %s", v, resp.Header.Get("Content-Type"))
		}
		var progress int
		var final string
		readSSE(resp.Body, func(data string) bool {
			switch noteMethod(data) {
			case "notifications/progress":
				progress++
				return true
			case "":
				if strings.TrimSpace(data) == "" {
					return true // the priming event of 2025-11-25
				}
				final = data // the answer
				return false
			}
			return true // a log message
		})
		resp.Body.Close()
		if progress < 4 || !strings.Contains(final, `"id":3`) || !strings.Contains(final, `"words":5`) {
			t.Fatalf("%s text_stats: %d progress, final %s", v, progress, final)
		}
		if x := h3Do(t, c, http.MethodDelete, s.URL, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": v}, ""); x.status != 204 {
			t.Fatalf("%s DELETE: %d", v, x.status)
		}
	}
}
