package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// fakeModule is a module whose tools answer at once, filling the call's
// statistics as the host does and logging one line with the call's context.
type fakeModule struct{ log *slog.Logger }

func (m *fakeModule) Name() string { return "fake" }
func (m *fakeModule) Description() *abi.Description {
	return &abi.Description{ABIVersion: 1, Name: "fake", Tools: []abi.Tool{
		{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "broken", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}}
}
func (m *fakeModule) Schemas(string) (contract.ToolSchemas, bool) {
	return contract.ToolSchemas{}, false
}
func (m *fakeModule) Call(ctx context.Context, method string, params []byte, _ contract.Peer) (*contract.Reply, error) {
	if st := contract.CallStatsFrom(ctx); st != nil {
		st.Instantiate, st.Run, st.MemoryBytes = time.Millisecond, 2*time.Millisecond, 65536
	}
	if m.log != nil {
		m.log.InfoContext(ctx, "guest stderr", "line", "hello")
	}
	if strings.Contains(string(params), `"broken"`) {
		return &contract.Reply{Result: []byte(`{"content":[{"type":"text","text":"no"}],"isError":true}`)}, nil
	}
	return &contract.Reply{Result: []byte(`{"content":[{"type":"text","text":"ok"}]}`)}, nil
}

func newTraced(t *testing.T, log *slog.Logger) (*protocol.Server, *tracetest.InMemoryExporter, *Metrics) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	m := NewMetrics()
	srv := protocol.NewServer(protocol.Options{Tracer: NewTracing(tp), Observer: m, Logger: log})
	cat, _ := protocol.NewCatalog([]protocol.Module{&fakeModule{log: log}}, nil)
	srv.SetCatalog(cat)
	m.WatchServer(srv)
	return srv, exp, m
}

const modernMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

func call(t *testing.T, srv *protocol.Server, ctx context.Context, body string) protocol.Response {
	t.Helper()
	msg, _, perr := protocol.Decode([]byte(body))
	if perr != nil {
		t.Fatal(perr)
	}
	return srv.Handle(ctx, nil, msg, nil, protocol.Hint{})
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

func byName(t *testing.T, spans tracetest.SpanStubs, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans.Snapshots() {
		if s.Name() == name {
			return s
		}
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %v", name, names)
	return nil
}

func TestSpansFromMeta(t *testing.T) {
	var logs bytes.Buffer
	srv, exp, _ := newTraced(t, slog.New(LogHandler(slog.NewTextHandler(&logs, nil))))
	const parentTrace, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	resp := call(t, srv, context.Background(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{`+
		modernMeta+`,"traceparent":"00-`+parentTrace+`-`+parentSpan+`-01","tracestate":"vendor=x"}}}`)
	if resp.Code != 0 {
		t.Fatalf("call: %s", resp.Body)
	}
	spans := exp.GetSpans()
	req := byName(t, spans, "tools/call echo")
	tool := byName(t, spans, "execute_tool echo")
	inst := byName(t, spans, "instantiate fake")
	run := byName(t, spans, "run fake")
	if got := req.SpanContext().TraceID().String(); got != parentTrace {
		t.Fatalf("trace id %s, want the client's %s", got, parentTrace)
	}
	if req.Parent().SpanID().String() != parentSpan || !req.Parent().IsRemote() {
		t.Fatalf("request span's parent %v, want the client's span", req.Parent())
	}
	if req.SpanKind() != trace.SpanKindServer || req.Parent().TraceState().Get("vendor") != "x" {
		t.Fatalf("kind %v, tracestate %v", req.SpanKind(), req.Parent().TraceState())
	}
	for key, want := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "jsonrpc.request.id": "7", "error.type": ""} {
		if got := attr(req, key); got != want {
			t.Errorf("request span %s = %q, want %q", key, got, want)
		}
	}
	if tool.Parent().SpanID() != req.SpanContext().SpanID() || inst.Parent().SpanID() != tool.SpanContext().SpanID() ||
		run.Parent().SpanID() != tool.SpanContext().SpanID() {
		t.Fatal("spans are not nested request > tool call > instantiate, run")
	}
	if d := run.EndTime().Sub(run.StartTime()); d != 2*time.Millisecond {
		t.Errorf("run span lasts %s, want the measured 2ms", d)
	}
	if attr(tool, "wasmcp.outcome") != "ok" || attr(run, "wasmcp.instance.memory_bytes") != "65536" {
		t.Errorf("tool span outcome %q, run memory %q", attr(tool, "wasmcp.outcome"), attr(run, "wasmcp.instance.memory_bytes"))
	}
	// The guest's log line names the trace.
	if !strings.Contains(logs.String(), "guest stderr") || !strings.Contains(logs.String(), "trace_id="+parentTrace) {
		t.Fatalf("log lines lack the trace id:\n%s", logs.String())
	}
}

func TestSpanErrors(t *testing.T) {
	srv, exp, _ := newTraced(t, nil)
	call(t, srv, context.Background(), `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"broken","arguments":{},"_meta":{`+modernMeta+`}}}`)
	call(t, srv, context.Background(), `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"nope","_meta":{`+modernMeta+`}}}`)
	spans := exp.GetSpans()
	tool := byName(t, spans, "execute_tool broken")
	if attr(tool, "error.type") != "tool_error" || tool.Status().Code.String() != "Error" {
		t.Errorf("tool error span: error.type %q, status %v", attr(tool, "error.type"), tool.Status())
	}
	unknown := byName(t, spans, "tools/call nope")
	if attr(unknown, "error.type") != "-32602" || attr(unknown, "jsonrpc.request.id") != "b" {
		t.Errorf("unknown tool span: error.type %q id %q", attr(unknown, "error.type"), attr(unknown, "jsonrpc.request.id"))
	}
	// No trace context from the client: a root span.
	if byName(t, spans, "tools/call broken").Parent().IsValid() {
		t.Error("a request without trace context got a parent")
	}
}

func TestSpansFromHTTPHeaders(t *testing.T) {
	srv, exp, _ := newTraced(t, nil)
	tr := NewTracing(sdktrace.NewTracerProvider()) // only its Wrap is used
	h := tr.Wrap(mcphttp.New(srv, mcphttp.Options{}))
	const parentTrace = "0af7651916cd43dd8448eb211c80319c"
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{`+modernMeta+`}}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo",
		"Traceparent": "00-" + parentTrace + "-b7ad6b7169203331-01"} {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 200 {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	s := byName(t, exp.GetSpans(), "tools/call echo")
	if s.SpanContext().TraceID().String() != parentTrace || s.Parent().SpanID().String() != "b7ad6b7169203331" {
		t.Fatalf("request span %v, parent %v: not the header's trace", s.SpanContext(), s.Parent())
	}
}

// A guest's outbound request becomes a client span, a child of the call
// it was made in, covering its start to its end; a refused one carries the
// reason as its error, and a method outside the standard set does not name
// the span.
func TestOutboundRequestSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := NewTracing(tp)
	ctx, parent := tp.Tracer("test").Start(context.Background(), "execute_tool fetch")
	start := time.Now().Add(-time.Second)
	tr.RequestDone(ctx, &egress.Done{Module: "web", Method: "GET", Outcome: "ok", Status: 200, Start: start, Duration: 250 * time.Millisecond})
	tr.RequestDone(ctx, &egress.Done{Module: "web", Method: "BREW", Outcome: "policy_refused", Start: start, Duration: time.Millisecond})
	parent.End()

	get := byName(t, exp.GetSpans(), "GET")
	if get.Parent().SpanID() != parent.SpanContext().SpanID() || get.SpanKind() != trace.SpanKindClient {
		t.Fatalf("GET span: parent %v kind %v", get.Parent().SpanID(), get.SpanKind())
	}
	if !get.StartTime().Equal(start) || get.EndTime().Sub(get.StartTime()) != 250*time.Millisecond {
		t.Fatalf("GET span: %v to %v", get.StartTime(), get.EndTime())
	}
	if attr(get, "http.response.status_code") != "200" || attr(get, "wasmcp.module") != "web" || get.Status().Code == codes.Error {
		t.Fatalf("GET span: %v %v", get.Attributes(), get.Status())
	}
	refused := byName(t, exp.GetSpans(), "HTTP")
	if refused.Status().Code != codes.Error || attr(refused, "error.type") != "policy_refused" || attr(refused, "http.request.method") != "BREW" {
		t.Fatalf("refused span: %v %v", refused.Attributes(), refused.Status())
	}
}
