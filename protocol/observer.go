package protocol

import (
	"context"
	"time"

	"github.com/bytedance/sonic/ast"

	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// Outcome classifies how a tools/call of a loaded tool ended.
type Outcome string

// The outcomes of a tools/call.
const (
	OutcomeOK        Outcome = "ok"         // the tool answered a result
	OutcomeToolError Outcome = "tool_error" // the tool answered a result with isError
	OutcomeError     Outcome = "error"      // the tool answered a JSON-RPC error
	OutcomeTrap      Outcome = "trap"       // the guest trapped, exited or broke the ABI
	OutcomeLimit     Outcome = "limit"      // the guest broke a limit (ToolCall.Limit names it)
	OutcomeCanceled  Outcome = "cancelled"  // the call was canceled
	OutcomeRefused   Outcome = "refused"    // refused before the guest ran (arguments, task policy)
	OutcomeInput     Outcome = "input"      // the guest waits for input from the client
)

// ToolCall is one finished tools/call of a loaded tool, as an Observer sees
// it. Module and Tool come from the catalog, never from the client.
type ToolCall struct {
	Module, Tool string
	Outcome      Outcome
	// Limit is the limit an OutcomeLimit call broke: "timeout", "memory",
	// "output", "line", "queue", "budget" or "other".
	Limit string
	// Start is when the guest call began; Duration the time from then to
	// its end (both zero for a refused call).
	Start    time.Time
	Duration time.Duration
	// ResultBytes is the size of the guest's raw result.
	ResultBytes int
	// Stats is what the host measured; nil for a refused call.
	Stats *contract.CallStats
}

// Observer receives what a Server does, for metrics. Its methods are called
// on the request path: they must be quick and must not block. A Server
// without one (Options.Observer nil) measures nothing.
type Observer interface {
	// ToolCallDone reports a finished tools/call. ctx is the request's.
	ToolCallDone(ctx context.Context, c *ToolCall)
	// TaskChanged reports a task created or moved to status.
	TaskChanged(status string)
}

// measuredCall calls mod's tools/call with call, reporting it to the
// server's observer when there is one.
func (s *Server) measuredCall(ctx context.Context, e *toolEntry, call func(context.Context) (*contract.Reply, error)) (*contract.Reply, error) {
	if s.observer == nil && s.tracer == nil {
		return call(ctx)
	}
	var end func(*ToolCall)
	if s.tracer != nil {
		ctx, end = s.tracer.StartToolCall(ctx, e.mod.Name(), e.tool.Name)
	}
	st := &contract.CallStats{}
	t0 := time.Now()
	reply, err := call(contract.WithCallStats(ctx, st))
	tc := &ToolCall{Module: e.mod.Name(), Tool: e.tool.Name, Start: t0, Duration: time.Since(t0), Stats: st}
	switch {
	case err != nil:
		tc.Outcome = failureOutcome(st.Failure)
		tc.Limit = st.Limit
	case len(reply.InputRequests) > 0:
		tc.Outcome = OutcomeInput
	case reply.Error != nil:
		tc.Outcome = OutcomeError
	default:
		tc.ResultBytes = len(reply.Result)
		tc.Outcome = resultOutcome(reply.Result)
	}
	if end != nil {
		end(tc)
	}
	if s.observer != nil {
		s.observer.ToolCallDone(ctx, tc)
	}
	return reply, err
}

// isErrorName is the member resultOutcome looks for.
var isErrorName = []byte("isError")

// resultOutcome is the outcome of a guest's result: OutcomeToolError when
// its isError member is true, else OutcomeOK. Metrics, traces and the
// audit line all classify a result by it.
func resultOutcome(result []byte) Outcome {
	// Most results have no isError member (nor an escaped key that could
	// spell it): those need no parse.
	if !jsonrpc.MayHold(result, isErrorName) {
		return OutcomeOK
	}
	if v, err := ast.NewSearcher(string(result)).GetByPath("isError"); err == nil {
		if b, err := v.Bool(); err == nil && b {
			return OutcomeToolError
		}
	}
	return OutcomeOK
}

// refused reports a tools/call of e refused before its guest ran.
func (r *request) refused(e *toolEntry) {
	if o := r.srv.observer; o != nil {
		o.ToolCallDone(r.ctx, &ToolCall{Module: e.mod.Name(), Tool: e.tool.Name, Outcome: OutcomeRefused})
	}
}

func failureOutcome(kind string) Outcome {
	switch kind {
	case "limit":
		return OutcomeLimit
	case "canceled":
		return OutcomeCanceled
	default:
		return OutcomeTrap
	}
}

// TraceInfo describes a request as it starts, for its span.
type TraceInfo struct {
	Method string
	// ID is the raw JSON-RPC id.
	ID []byte
	// SessionID is the legacy session's id, "" when there is none.
	SessionID string
	// Tool is params.name of a tools/call as the client sent it (not
	// validated: fit for a span attribute, not for a metric label).
	Tool string
	// Traceparent and Tracestate are the W3C trace context of
	// params._meta, "" when absent.
	Traceparent, Tracestate string
}

// Tracer starts spans. Its methods are called on the request path and must
// be quick. A Server without one (Options.Tracer nil) traces nothing.
type Tracer interface {
	// StartRequest starts the span of a request (not of a notification)
	// under ctx, the transport's context; the request runs under the
	// returned context and end is called with its response.
	StartRequest(ctx context.Context, info *TraceInfo) (_ context.Context, end func(Response))
	// StartToolCall starts the span of a guest's tools/call under ctx; the
	// call runs under the returned context and end is called with how it
	// ended.
	StartToolCall(ctx context.Context, module, tool string) (_ context.Context, end func(*ToolCall))
}
