package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// The official Go SDK client (github.com/modelcontextprotocol/go-sdk
// v1.8.0). Its v1.8.0 client speaks 2026-07-28: Connect tries
// server/discover first and falls back to initialize on an error, puts the
// per-request _meta on every request of a modern session, and answers
// input_required results (MRTR) by calling its own handlers and retrying.
// ClientSessionOptions.ProtocolVersion "2025-11-25" makes it initialize a
// legacy session instead. Each test checks the negotiated version and the
// messages on the wire, so a silent fallback from one era to the other
// fails.

const (
	legacyVersion = "2025-11-25"
	modernVersion = "2026-07-28"
	goComment     = "ship it from Go"
)

func TestGoSDKLegacyStdio(t *testing.T) {
	t.Parallel()
	w := &wire{}
	runGoScenario(t, stdioTransport(t, w), w, legacyVersion)
}

func TestGoSDKModernStdio(t *testing.T) {
	t.Parallel()
	w := &wire{}
	runGoScenario(t, stdioTransport(t, w), w, modernVersion)
}

func TestGoSDKLegacyStreamableHTTP(t *testing.T) {
	t.Parallel()
	w := &wire{}
	runGoScenario(t, httpTransport(startHTTP(t)+"/mcp", w), w, legacyVersion)
}

func TestGoSDKModernStreamableHTTP(t *testing.T) {
	t.Parallel()
	w := &wire{}
	runGoScenario(t, httpTransport(startHTTP(t)+"/mcp", w), w, modernVersion)
}

// The 2024-11-05 HTTP+SSE transport (wasmcp serve --legacy-sse), with the
// latest legacy revision as clients still using it do.
func TestGoSDKLegacySSE(t *testing.T) {
	t.Parallel()
	w := &wire{}
	tr := &mcp.SSEClientTransport{
		Endpoint:   startHTTP(t, "--legacy-sse") + "/sse",
		HTTPClient: &http.Client{Transport: &recordingRoundTripper{next: http.DefaultTransport, w: w}},
	}
	runGoScenario(t, tr, w, legacyVersion)
}

// stdioTransport runs `wasmcp serve` on stdio, recording the messages in w.
func stdioTransport(t *testing.T, w *wire) mcp.Transport {
	log := &e2e.LockedBuffer{}
	t.Cleanup(func() { checkServerLog(t, "wasmcp serve --stdio", log) })
	cmd := exec.Command(wasmcpBin, serveArgs("--stdio")...)
	cmd.Stderr = log
	return &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: w}
}

// httpTransport talks Streamable HTTP to url, recording the messages in w.
// (mcp.LoggingTransport would hide the HTTP connection's session updates
// from the SDK, so the recording happens at the HTTP level.)
func httpTransport(url string, w *wire) mcp.Transport {
	w.http = true
	return &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: &recordingRoundTripper{next: http.DefaultTransport, w: w}},
		MaxRetries: -1,
	}
}

// goClient is a Go SDK client that answers elicitations (approve, with
// goComment) and collects progress notifications.
type goClient struct {
	*mcp.Client
	progress chan *mcp.ProgressNotificationParams
	elicits  chan *mcp.ElicitParams
}

func newGoClient() *goClient {
	c := &goClient{
		progress: make(chan *mcp.ProgressNotificationParams, 64),
		elicits:  make(chan *mcp.ElicitParams, 8),
	}
	c.Client = mcp.NewClient(&mcp.Implementation{Name: "wasmcp-interop-go", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			select {
			case c.elicits <- req.Params:
			default:
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "comment": goComment}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case c.progress <- req.Params:
			default:
			}
		},
	})
	return c
}

// runGoScenario connects a Go SDK client over tr asking for version, and
// runs the scenario: list tools, call text_stats with arguments and a
// progress token, call hash, and call confirm_plan answering its
// elicitation.
func runGoScenario(t *testing.T, tr mcp.Transport, w *wire, version string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newGoClient()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer func() {
		if err := cs.Close(); err != nil {
			t.Errorf("closing the session: %v", err)
		}
	}()
	ir := cs.InitializeResult()
	if ir.ProtocolVersion != version {
		t.Fatalf("negotiated protocol version %q, want %q", ir.ProtocolVersion, version)
	}
	if ir.ServerInfo == nil || ir.ServerInfo.Name != "wasmcp" {
		t.Errorf("serverInfo = %+v, want name wasmcp", ir.ServerInfo)
	}
	if ir.Capabilities == nil || ir.Capabilities.Tools == nil {
		t.Errorf("capabilities %+v lack tools", ir.Capabilities)
	}

	// List.
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	checkToolNames(t, names)

	// Call with arguments, with progress.
	token := "go-progress-" + version
	params := &mcp.CallToolParams{Name: "text_stats", Arguments: map[string]any{"text": statsText, "top": statsTop}}
	params.SetProgressToken(token)
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("calling text_stats: %v", err)
	}
	if res.IsError {
		t.Fatalf("text_stats failed: %s", contentText(res))
	}
	checkStats(t, structured(t, res))
	var notes []progressNote
	deadline := time.After(10 * time.Second)
	for len(notes) < progressLen {
		select {
		case p := <-c.progress:
			if p.ProgressToken != token {
				t.Errorf("progress token %v, want %q", p.ProgressToken, token)
			}
			notes = append(notes, progressNote{Progress: p.Progress, Total: p.Total, Message: p.Message})
		case <-deadline:
			t.Fatalf("got %d progress notifications within 10s, want %d: %+v", len(notes), progressLen, notes)
		}
	}
	// The handler may run out of order; the wire order is checked below.
	slices.SortFunc(notes, func(a, b progressNote) int { return int(a.Progress - b.Progress) })
	checkProgress(t, notes)
	checkProgress(t, w.progress(token))
	if w.http {
		w.checkOnResponseStream(t, token)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "hash", Arguments: map[string]any{"algorithm": "sha256", "text": hashInput}})
	if err != nil {
		t.Fatalf("calling hash: %v", err)
	}
	if res.IsError {
		t.Fatalf("hash failed: %s", contentText(res))
	}
	checkHash(t, structured(t, res))

	// An elicitation answered by the client.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm_plan", Arguments: map[string]any{"plan": planText}})
	if err != nil {
		t.Fatalf("calling confirm_plan: %v", err)
	}
	if got := contentText(res); res.IsError || got != wantPlanAnswer(goComment) {
		t.Errorf("confirm_plan = %q (isError %t), want %q", got, res.IsError, wantPlanAnswer(goComment))
	}
	select {
	case e := <-c.elicits:
		checkElicitRequest(t, e.Message, e.RequestedSchema)
	default:
		t.Errorf("the client's elicitation handler was not called")
	}
	if n := len(c.elicits); n != 0 {
		t.Errorf("the client answered %d more elicitations, want 1 in all", n+1)
	}

	checkEra(t, w, version)
}

// checkEra checks that the messages on the wire belong to the era asked
// for: a legacy session has initialize and the elicitation as a
// server-to-client request; a modern one has no initialize, no request
// from the server, resultType on every result, and the elicitation as an
// input_required result answered by a retry carrying inputResponses.
func checkEra(t *testing.T, w *wire, version string) {
	t.Helper()
	msgs := w.messages()
	var initialize, serverRequests, elicitRequests, inputRequired, retries, untyped int
	for _, m := range msgs {
		switch {
		case m.out && m.Method == "initialize":
			initialize++
		case m.out && m.Method == "tools/call" && m.Params.InputResponses != nil:
			retries++
		case !m.out && m.Method != "" && len(m.ID) > 0:
			serverRequests++
			if m.Method == "elicitation/create" {
				elicitRequests++
			}
		case !m.out && m.Result != nil:
			if m.Result.ResultType == "" {
				untyped++
			}
			if m.Result.ResultType == "input_required" {
				for _, ir := range m.Result.InputRequests {
					if ir.Method == "elicitation/create" {
						inputRequired++
					}
				}
			}
		}
	}
	if version == legacyVersion {
		if initialize != 1 || elicitRequests != 1 || inputRequired != 0 {
			t.Errorf("legacy session: %d initialize, %d elicitation/create requests, %d input_required results; want 1, 1, 0\n%s",
				initialize, elicitRequests, inputRequired, w)
		}
		return
	}
	if initialize != 0 || serverRequests != 0 || inputRequired != 1 || retries != 1 || untyped != 0 {
		t.Errorf("2026-07-28: %d initialize, %d server requests, %d input_required elicitations, %d retries with inputResponses, "+
			"%d results without resultType; want 0, 0, 1, 1, 0\n%s", initialize, serverRequests, inputRequired, retries, untyped, w)
	}
}

func contentText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func structured(t *testing.T, res *mcp.CallToolResult) []byte {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("result has no structuredContent (%v): %s", err, contentText(res))
	}
	return b
}

// wire records the JSON-RPC messages between a client and the server, in
// the order the client wrote or read them.
type wire struct {
	http bool // recorded by recordingRoundTripper
	mu   sync.Mutex
	msgs []wireMsg
	raw  []string
}

type wireMsg struct {
	out bool // client to server
	// via is the id of the request whose HTTP response carried this
	// server message; "" over stdio and on a GET stream.
	via    string
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken  any             `json:"progressToken"`
		Progress       float64         `json:"progress"`
		Total          float64         `json:"total"`
		Message        string          `json:"message"`
		InputResponses json.RawMessage `json:"inputResponses"`
		Meta           struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
	Result *struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	} `json:"result"`
}

// Write takes the lines mcp.LoggingTransport writes: "read: MSG" and
// "write: MSG".
func (w *wire) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(string(p), "\n") {
		if msg, ok := strings.CutPrefix(line, "read: "); ok {
			w.add(false, msg, "")
		} else if msg, ok := strings.CutPrefix(line, "write: "); ok {
			w.add(true, msg, "")
		}
	}
	return len(p), nil
}

// add records one message; out is true for client-to-server messages, via
// is wireMsg.via.
func (w *wire) add(out bool, msg, via string) {
	msg = strings.TrimSpace(msg)
	if !strings.HasPrefix(msg, "{") {
		return
	}
	m := wireMsg{out: out, via: via}
	if json.Unmarshal([]byte(msg), &m) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, m)
	dir := "<- "
	if out {
		dir = "-> "
	}
	if len(msg) > 600 {
		msg = msg[:600] + "…"
	}
	w.raw = append(w.raw, dir+msg)
}

func (w *wire) messages() []wireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

// progress returns the progress notifications for token the client read,
// in wire order.
func (w *wire) progress(token string) []progressNote {
	var out []progressNote
	for _, m := range w.messages() {
		if !m.out && m.Method == "notifications/progress" && m.Params.ProgressToken == token {
			out = append(out, progressNote{Progress: m.Params.Progress, Total: m.Params.Total, Message: m.Params.Message})
		}
	}
	return out
}

// checkOnResponseStream checks that the progress notifications for token
// came on the HTTP response to the request that carried token.
func (w *wire) checkOnResponseStream(t *testing.T, token string) {
	t.Helper()
	var id string
	for _, m := range w.messages() {
		if m.out && m.Params.Meta.ProgressToken == token {
			id = string(m.ID)
		}
	}
	for _, m := range w.messages() {
		if !m.out && m.Method == "notifications/progress" && m.Params.ProgressToken == token && m.via != id {
			where := "a stream that answers no request"
			if m.via != "" {
				where = "the response to request " + m.via
			}
			t.Errorf("progress for %q came on %s, want the response to request %s", token, where, id)
		}
	}
}

func (w *wire) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return "wire:\n" + strings.Join(w.raw, "\n")
}

// recordingRoundTripper records the JSON-RPC messages in HTTP request
// bodies and in JSON or SSE response bodies.
type recordingRoundTripper struct {
	next http.RoundTripper
	w    *wire
}

func (rt *recordingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	var via string
	if req.Body != nil && req.Method == http.MethodPost {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		rt.w.add(true, string(body), "")
		req.Body = io.NopCloser(bytes.NewReader(body))
		var m struct{ ID json.RawMessage }
		if json.Unmarshal(body, &m) == nil {
			via = string(m.ID)
		}
	}
	resp, err := rt.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &recordingBody{rc: resp.Body, w: rt.w, via: via}
	return resp, nil
}

// recordingBody records each complete line of a response body that is a
// JSON message, bare (application/json) or in an SSE data field.
type recordingBody struct {
	rc      io.ReadCloser
	w       *wire
	via     string
	partial []byte
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.partial = append(b.partial, p[:n]...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.line(b.partial[:i])
		b.partial = b.partial[i+1:]
	}
	if err == io.EOF {
		b.flush()
	}
	return n, err
}

func (b *recordingBody) Close() error {
	b.flush()
	return b.rc.Close()
}

func (b *recordingBody) flush() {
	if len(b.partial) > 0 {
		b.line(b.partial)
		b.partial = nil
	}
}

func (b *recordingBody) line(l []byte) {
	s := strings.TrimSpace(string(l))
	if d, ok := strings.CutPrefix(s, "data:"); ok {
		s = d
	}
	b.w.add(false, s, b.via)
}
