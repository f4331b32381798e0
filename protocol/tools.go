package protocol

import (
	"context"
	"errors"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

func (r *request) callTool() Response {
	e, ok := r.cat.toolIdx[r.p.Name]
	if !ok {
		return r.fail(errorf(CodeInvalidParams, "Unknown tool: "+r.p.Name))
	}
	if !r.allowed(e.mod, ItemTool, r.p.Name) {
		return r.hiddenTool(e)
	}
	mode, merr := r.toolMode(e) // inline, task or escalate (mode.go)
	if merr != nil {
		r.refused(e)
		return r.fail(merr)
	}
	if e.schemas.Input != nil {
		if err := r.srv.validate(r.ctx, e.schemas.Input, r.p.Arguments, true); err != nil {
			res := toolError("Invalid arguments for tool " + r.p.Name + ": " + err.Error())
			r.refused(e)
			if mode == modeTask {
				return r.runAsTask(e, res)
			}
			return r.ok(res, noCache)
		}
	}
	if err := r.prepareInputs(); err != nil {
		r.refused(e)
		return r.fail(err)
	}
	switch mode {
	case modeTask:
		return r.runAsTask(e, nil)
	case modeEscalate:
		return r.runEscalating(e)
	}
	reply, err := r.srv.measuredCall(r.ctx, e, func(ctx context.Context) (*contract.Reply, error) {
		return r.invokeCtx(ctx, e.mod, abi.MethodToolsCall)
	})
	return r.toolAnswer(e, reply, err)
}

// toolAnswer answers a tools/call from its guest's outcome in place.
func (r *request) toolAnswer(e *toolEntry, reply *contract.Reply, err error) Response {
	if err != nil && canceled(err) {
		return Response{Era: r.era}
	}
	if err == nil && len(reply.InputRequests) > 0 {
		return r.inputRequired(reply)
	}
	result, rerr := r.srv.toolOutcome(r.ctx, e, reply, err)
	if rerr != nil {
		return r.fail(rerr)
	}
	return r.ok(result, noCache)
}

// toolOutcome is the result or the JSON-RPC error a tools/call answers for
// its guest's outcome (not waiting for input): a guest that failed (trap,
// limit, broken ABI) is a tool error, as is a structuredContent that does
// not match the output schema; a JSON-RPC error of the guest is passed on.
func (s *Server) toolOutcome(ctx context.Context, e *toolEntry, reply *contract.Reply, err error) ([]byte, *Error) {
	if err != nil {
		if errors.Is(err, contract.ErrCanceled) && ctx.Err() != nil {
			// The client went away (a reset stream, a closed
			// connection): nothing to warn about.
			s.log.DebugContext(ctx, "tool call canceled: its request ended", "tool", e.tool.Name, "err", err)
		} else {
			s.failLog.warn(ctx, s.log, "tool call failed", "tool", e.tool.Name, "err", err)
		}
		return toolError(err.Error()), nil
	}
	if reply.Error != nil {
		return nil, reply.Error
	}
	if e.schemas.Output != nil {
		if msg := s.checkStructured(ctx, reply.Result, e); msg != "" {
			return toolError(msg), nil
		}
	}
	return reply.Result, nil
}

// guestParams are the params the guest of the request is called with.
func (r *request) callParams() []byte {
	if r.guestParams != nil {
		return r.guestParams
	}
	return r.msg.Params
}

// checkStructured validates structuredContent against the tool's output
// schema; it returns a message when the result does not conform.
func (s *Server) checkStructured(ctx context.Context, result []byte, e *toolEntry) string {
	var res struct {
		IsError    bool        `json:"isError"`
		Structured jsonrpc.Raw `json:"structuredContent"`
	}
	if err := sonic.Unmarshal(result, &res); err != nil {
		return "tool " + e.tool.Name + " returned a result that is not a JSON object"
	}
	if res.IsError {
		return ""
	}
	if len(res.Structured) == 0 {
		return "tool " + e.tool.Name + " declares an outputSchema but returned no structuredContent"
	}
	if err := s.validate(ctx, e.schemas.Output, res.Structured, false); err != nil {
		return "tool " + e.tool.Name + " returned structuredContent that does not match its outputSchema: " + err.Error()
	}
	return ""
}

// validate applies a tool's schema to doc within the server's validation
// budget and ctx (the request's): the host's own work for a call is
// bounded as the guest's is.
func (s *Server) validate(ctx context.Context, v contract.Validator, doc []byte, emptyAsObject bool) error {
	if b, ok := v.(interface {
		ValidateJSONContext(context.Context, time.Duration, []byte, bool) error
	}); ok {
		return b.ValidateJSONContext(ctx, s.opts.ValidationBudget, doc, emptyAsObject)
	}
	return v.ValidateJSON(doc, emptyAsObject)
}

// toolError is a CallToolResult with isError set and one text block.
func toolError(msg string) []byte {
	b := make([]byte, 0, len(msg)+64)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = appendString(b, msg)
	return append(b, `}],"isError":true}`...)
}
