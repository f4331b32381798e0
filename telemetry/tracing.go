package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/protocol"
)

// Attribute keys of OpenTelemetry's MCP and GenAI semantic conventions, and
// wasmcp's own.
const (
	attrMethod      = attribute.Key("mcp.method.name")
	attrSession     = attribute.Key("mcp.session.id")
	attrRequestID   = attribute.Key("jsonrpc.request.id")
	attrToolName    = attribute.Key("gen_ai.tool.name")
	attrOperation   = attribute.Key("gen_ai.operation.name")
	attrErrorType   = attribute.Key("error.type")
	attrModule      = attribute.Key("wasmcp.module")
	attrOutcome     = attribute.Key("wasmcp.outcome")
	attrLimit       = attribute.Key("wasmcp.limit")
	attrMemory      = attribute.Key("wasmcp.instance.memory_bytes")
	attrOutput      = attribute.Key("wasmcp.instance.output_bytes")
	attrQueueWaitMS = attribute.Key("wasmcp.gate.wait_ms")
	attrHTTPMethod  = attribute.Key("http.request.method")
	attrHTTPStatus  = attribute.Key("http.response.status_code")
)

// Tracing makes spans for requests and tool calls; it implements
// protocol.Tracer. A request's span is a child of the W3C trace context of
// its params._meta (traceparent, tracestate) when there is one, else of the
// HTTP headers' (see Tracing.Wrap). Each tool call gets a child span, and
// its guest instance two more: instantiate and run.
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// NewTracing traces with tp.
func NewTracing(tp trace.TracerProvider) *Tracing {
	return &Tracing{
		tracer: tp.Tracer("github.com/wasmcp/wasmcp"),
		prop:   propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

// TracingConfig configures the OTLP export of traces.
type TracingConfig struct {
	// Endpoint is the collector's URL: for OTLP/HTTP e.g.
	// http://127.0.0.1:4318 (the path /v1/traces is added when absent);
	// for gRPC e.g. http://127.0.0.1:4317 (the scheme http means no TLS,
	// https TLS with the system's roots).
	Endpoint string
	// Protocol is ProtocolHTTP (the default when "") or ProtocolGRPC.
	Protocol string
	// Sample is the fraction of root traces kept (a parent's decision is
	// followed); 0 means 1.
	Sample float64
	// Service is the service.name; "" means wasmcp.
	Service, Version string
}

// The OTLP protocols (TracingConfig.Protocol), named as
// OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// StartOTLP exports traces over OTLP/HTTP or OTLP/gRPC as cfg says. Call
// shutdown at exit to flush the spans still buffered.
func StartOTLP(ctx context.Context, cfg TracingConfig) (_ *Tracing, shutdown func(context.Context) error, _ error) {
	var exp sdktrace.SpanExporter
	var err error
	switch cfg.Protocol {
	case ProtocolHTTP, "":
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.Endpoint))
	case ProtocolGRPC:
		if u, perr := url.Parse(cfg.Endpoint); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, fmt.Errorf("OTLP/gRPC endpoint %q: want http://HOST:PORT (no TLS) or https://HOST:PORT", cfg.Endpoint)
		}
		exp, err = grpcExporter(ctx, cfg.Endpoint)
	default:
		return nil, nil, fmt.Errorf("OTLP protocol %q: want %s or %s", cfg.Protocol, ProtocolHTTP, ProtocolGRPC)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	if cfg.Sample <= 0 || cfg.Sample > 1 {
		cfg.Sample = 1
	}
	if cfg.Service == "" {
		cfg.Service = "wasmcp"
	}
	res := resource.NewSchemaless(attribute.String("service.name", cfg.Service), attribute.String("service.version", cfg.Version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.Sample))))
	return NewTracing(tp), tp.Shutdown, nil
}

// Wrap extracts the W3C trace context of an HTTP request's headers into its
// context; pass it as mcphttp.Options.Wrap.
func (t *Tracing) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") != "" {
			r = r.WithContext(t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		h.ServeHTTP(w, r)
	})
}

// metaCarrier is the trace context of params._meta.
type metaCarrier struct{ traceparent, tracestate string }

func (c metaCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	}
	return ""
}
func (c metaCarrier) Set(string, string) {}
func (c metaCarrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

// StartRequest implements protocol.Tracer.
func (t *Tracing) StartRequest(ctx context.Context, info *protocol.TraceInfo) (context.Context, func(protocol.Response)) {
	if info.Traceparent != "" {
		ctx = t.prop.Extract(ctx, metaCarrier{info.Traceparent, info.Tracestate})
	}
	name := info.Method
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, attrMethod.String(info.Method), attrRequestID.String(requestID(info.ID)))
	if info.SessionID != "" {
		attrs = append(attrs, attrSession.String(info.SessionID))
	}
	if info.Tool != "" {
		name += " " + info.Tool
		attrs = append(attrs, attrToolName.String(info.Tool), attrOperation.String("execute_tool"))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return ctx, func(resp protocol.Response) {
		if resp.Code != 0 {
			code := strconv.Itoa(resp.Code)
			span.SetAttributes(attrErrorType.String(code))
			span.SetStatus(codes.Error, "JSON-RPC error "+code)
		}
		span.End()
	}
}

// requestID is a JSON-RPC id as text: a string's content, a number's digits.
func requestID(raw []byte) string {
	if s, err := strconv.Unquote(string(raw)); err == nil {
		return s
	}
	return string(raw)
}

// RequestDone implements egress.Observer: a client span for a guest's
// outbound HTTP request, a child of the call it was made in, from its
// start to its end (redirects included). Like the metrics, it names no
// URL or host: the module, the method, the outcome and the last status.
func (t *Tracing) RequestDone(ctx context.Context, d *egress.Done) {
	name := "HTTP"
	if knownMethods[d.Method] {
		name = d.Method
	}
	attrs := []attribute.KeyValue{attrModule.String(d.Module), attrOutcome.String(d.Outcome)}
	if d.Method != "" {
		attrs = append(attrs, attrHTTPMethod.String(d.Method))
	}
	if d.Status != 0 {
		attrs = append(attrs, attrHTTPStatus.Int(d.Status))
	}
	_, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(d.Start),
		trace.WithAttributes(attrs...))
	if d.Outcome != "ok" {
		span.SetAttributes(attrErrorType.String(d.Outcome))
		span.SetStatus(codes.Error, d.Outcome)
	}
	span.End(trace.WithTimestamp(d.Start.Add(d.Duration)))
}

// knownMethods are the methods a span is named after (OpenTelemetry's
// HTTP conventions); any other is named "HTTP", so a guest cannot mint
// span names.
var knownMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true,
	"CONNECT": true, "OPTIONS": true, "TRACE": true, "PATCH": true}

// StartToolCall implements protocol.Tracer.
func (t *Tracing) StartToolCall(ctx context.Context, module, tool string) (context.Context, func(*protocol.ToolCall)) {
	ctx, span := t.tracer.Start(ctx, "execute_tool "+tool, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrOperation.String("execute_tool"), attrToolName.String(tool), attrModule.String(module)))
	return ctx, func(c *protocol.ToolCall) {
		span.SetAttributes(attrOutcome.String(string(c.Outcome)))
		if st := c.Stats; st != nil && st.Instantiate > 0 {
			at := c.Start.Add(st.QueueWait)
			_, inst := t.tracer.Start(ctx, "instantiate "+module, trace.WithTimestamp(at),
				trace.WithAttributes(attrModule.String(module)))
			at = at.Add(st.Instantiate)
			inst.End(trace.WithTimestamp(at))
			_, run := t.tracer.Start(ctx, "run "+module, trace.WithTimestamp(at),
				trace.WithAttributes(attrModule.String(module), attrMemory.Int64(int64(st.MemoryBytes)), attrOutput.Int64(st.OutputBytes)))
			run.End(trace.WithTimestamp(at.Add(st.Run)))
			span.SetAttributes(attrQueueWaitMS.Float64(float64(st.QueueWait) / float64(time.Millisecond)))
		}
		switch c.Outcome {
		case protocol.OutcomeOK, protocol.OutcomeInput:
		default:
			span.SetAttributes(attrErrorType.String(string(c.Outcome)))
			if c.Limit != "" {
				span.SetAttributes(attrLimit.String(c.Limit))
			}
			span.SetStatus(codes.Error, string(c.Outcome))
		}
		span.End()
	}
}

// LogHandler adds the trace and span ids of a record's context (when it has
// a span) to every record h handles, so a call's log lines name its trace.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return l.Handler.Handle(ctx, r)
}

func (l logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(as)}
}

func (l logHandler) WithGroup(name string) slog.Handler {
	return logHandler{l.Handler.WithGroup(name)}
}
