package protocol

import (
	"context"
	"errors"
	"strconv"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
)

// invoke runs a guest for the request with its cancellation tracked on the
// session, so notifications/cancelled (or the session's end) ends it.
func (r *request) invoke(mod Module, method string) (*host.Reply, error) {
	ctx, cancel := context.WithCancelCause(r.ctx)
	defer cancel(nil)
	if r.sess != nil {
		defer r.sess.track(r.msg.ID, cancel)()
	}
	params := r.msg.Params
	if r.guestParams != nil {
		params = r.guestParams
	}
	return mod.Call(ctx, method, params, &peer{r: r, mod: mod})
}

// canceled reports whether err ended a call the client canceled; such a
// request gets no answer.
func canceled(err error) bool {
	return host.IsKind(err, host.KindCanceled) && (errors.Is(err, ErrCanceledByClient) || errors.Is(err, ErrSessionClosed))
}

func (r *request) callTool() Response {
	e, ok := r.cat.toolIdx[r.p.Name]
	if !ok {
		return r.fail(errorf(CodeInvalidParams, "Unknown tool: "+r.p.Name))
	}
	mode, merr := r.toolMode(e) // inline, task or escalate (relay.go)
	if merr != nil {
		return r.fail(merr)
	}
	if e.schemas.Input != nil {
		if err := e.schemas.Input.ValidateJSON(r.p.Arguments, true); err != nil {
			res := toolError("Invalid arguments for tool " + r.p.Name + ": " + err.Error())
			if mode == modeTask {
				return r.runAsTask(e, res)
			}
			return r.ok(res, false)
		}
	}
	if err := r.prepareInputs(); err != nil {
		return r.fail(err)
	}
	switch mode {
	case modeTask:
		return r.runAsTask(e, nil)
	case modeEscalate:
		return r.runEscalating(e)
	}
	reply, err := r.invoke(e.mod, abi.MethodToolsCall)
	return r.toolAnswer(e, reply, err)
}

// missingTasks is the error for a task-required tool called by a client
// that did not declare tasks.
func (r *request) missingTasks() *Error {
	if r.era == Modern {
		data, _ := sonic.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtTasks: map[string]any{}}}})
		return &Error{Code: CodeMissingCapability, Message: "This tool requires the " + ExtTasks + " extension", Data: data}
	}
	return errorf(CodeMethodNotFound, "Tool "+r.p.Name+" must be called as a task (params.task)")
}

// checkStructured validates structuredContent against the tool's output
// schema; it returns a message when the result does not conform.
func checkStructured(result []byte, e *toolEntry) string {
	var res struct {
		IsError    bool     `json:"isError"`
		Structured rawValue `json:"structuredContent"`
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
	if err := e.schemas.Output.ValidateJSON(res.Structured, false); err != nil {
		return "tool " + e.tool.Name + " returned structuredContent that does not match its outputSchema: " + err.Error()
	}
	return ""
}

// toolError is a CallToolResult with isError set and one text block.
func toolError(msg string) []byte {
	b := make([]byte, 0, len(msg)+64)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = appendString(b, msg)
	return append(b, `}],"isError":true}`...)
}

func (r *request) readResource() Response {
	uri := r.p.URI
	if uri == "" {
		return r.fail(errorf(CodeInvalidParams, "Missing required parameter: uri"))
	}
	if resp, ok := r.readSkillFile(uri); ok {
		return resp
	}
	var mod Module
	if e, ok := r.cat.resIdx[uri]; ok {
		mod = e.mod
	} else {
		for _, t := range r.cat.templates {
			if _, ok := t.t.Match(uri); ok {
				mod = t.mod
				break
			}
		}
	}
	if mod == nil {
		return r.fail(r.notFound(uri))
	}
	if err := r.prepareInputs(); err != nil {
		return r.fail(err)
	}
	reply, err := r.invoke(mod, abi.MethodResourceRead)
	if err != nil {
		return r.guestFailure(err)
	}
	if len(reply.InputRequests) > 0 {
		return r.inputRequired(reply)
	}
	if reply.Error != nil {
		if reply.Error.Code == CodeInvalidParams || reply.Error.Code == CodeResourceNotFound {
			return r.fail(r.notFound(uri))
		}
		return r.fail(&Error{Code: reply.Error.Code, Message: reply.Error.Message, Data: reply.Error.Data})
	}
	return r.done(reply.Result, true)
}

// notFound is the resource-not-found error of the request's revision.
func (r *request) notFound(uri string) *Error {
	data, _ := sonic.Marshal(map[string]string{"uri": uri})
	code := CodeInvalidParams
	if r.era == Legacy {
		code = CodeResourceNotFound
	}
	return &Error{Code: code, Message: "Resource not found", Data: data}
}

// guestFailure answers a failed non-tool guest call with -32603.
func (r *request) guestFailure(err error) Response {
	if canceled(err) {
		return Response{Era: r.era}
	}
	r.srv.log.Warn("guest call failed", "method", r.msg.Method, "err", err)
	return r.fail(errorf(CodeInternalError, err.Error()))
}

func (r *request) getPrompt() Response {
	e, ok := r.cat.promptIdx[r.p.Name]
	if !ok {
		return r.fail(errorf(CodeInvalidParams, "Unknown prompt: "+r.p.Name))
	}
	if err := r.prepareInputs(); err != nil {
		return r.fail(err)
	}
	reply, err := r.invoke(e.mod, abi.MethodPromptsGet)
	if err != nil {
		return r.guestFailure(err)
	}
	if len(reply.InputRequests) > 0 {
		return r.inputRequired(reply)
	}
	if reply.Error != nil {
		return r.fail(&Error{Code: reply.Error.Code, Message: reply.Error.Message, Data: reply.Error.Data})
	}
	return r.ok(reply.Result, false)
}

var emptyCompletion = []byte(`{"completion":{"values":[],"total":0,"hasMore":false}}`)

func (r *request) complete() Response {
	ref := r.p.Ref
	if ref == nil || r.p.Argument == nil {
		return r.fail(errorf(CodeInvalidParams, "completion/complete needs ref and argument"))
	}
	var key string
	switch ref.Type {
	case "ref/prompt":
		if _, ok := r.cat.promptIdx[ref.Name]; !ok {
			return r.fail(errorf(CodeInvalidParams, "Unknown prompt: "+ref.Name))
		}
		key = "prompt\x00" + ref.Name
	case "ref/resource":
		key = "template\x00" + ref.URI
	default:
		return r.fail(errorf(CodeInvalidParams, "Unknown ref type: "+ref.Type))
	}
	mod, ok := r.cat.complete[key]
	if !ok {
		return r.ok(emptyCompletion, false)
	}
	reply, err := r.invoke(mod, abi.MethodComplete)
	if err != nil {
		return r.guestFailure(err)
	}
	if reply.Error != nil {
		return r.fail(&Error{Code: reply.Error.Code, Message: reply.Error.Message, Data: reply.Error.Data})
	}
	return r.ok(reply.Result, false)
}

// peer carries a guest's messages to the request's client.
type peer struct {
	r   *request
	mod Module // the module the guest runs
}

func (p *peer) Notify(ctx context.Context, method string, params []byte) {
	r := p.r
	switch method {
	case abi.MethodToolsListChanged, abi.MethodPromptsListChanged, abi.MethodResourcesListChanged, abi.MethodResourceUpdated:
		p.guestNotify(method, params)
		return
	}
	if r.stream == nil {
		return
	}
	switch method {
	case abi.MethodProgress:
		if len(r.token) == 0 {
			return
		}
		var pr struct {
			Progress *float64 `json:"progress"`
			Total    *float64 `json:"total,omitempty"`
			Message  string   `json:"message,omitempty"`
		}
		if sonic.Unmarshal(params, &pr) != nil || pr.Progress == nil {
			return
		}
		b := make([]byte, 0, 96)
		b = append(b, `{"progressToken":`...)
		b = append(b, r.token...)
		b = append(b, `,"progress":`...)
		b = strconv.AppendFloat(b, *pr.Progress, 'g', -1, 64)
		if pr.Total != nil {
			b = append(b, `,"total":`...)
			b = strconv.AppendFloat(b, *pr.Total, 'g', -1, 64)
		}
		if pr.Message != "" {
			b = append(b, `,"message":`...)
			b = appendString(b, pr.Message)
		}
		b = append(b, '}')
		_ = r.stream.Send(ctx, Notification(method, b))
	case abi.MethodLog:
		var lm struct {
			Level string `json:"level"`
		}
		if sonic.Unmarshal(params, &lm) != nil {
			return
		}
		l, ok := parseLevel(lm.Level)
		if !ok || l < r.currentLevel() {
			return
		}
		_ = r.stream.Send(ctx, Notification(method, params))
	}
}

// currentLevel is the minimum level to forward: the session's (which
// logging/setLevel may change during a call) or the request's _meta.
func (r *request) currentLevel() int {
	if r.era == Legacy && r.sess != nil {
		_, _, l := r.sess.state()
		return l
	}
	return r.logLevel
}

func (p *peer) Request(ctx context.Context, method string, params []byte) ([]byte, error) {
	r := p.r
	if r.era == Modern {
		return p.modernRequest(ctx, method, params)
	}
	if e := r.requiredCapability(method, params); e != nil {
		return nil, e
	}
	if r.sess == nil || r.stream == nil {
		return nil, &abi.Error{Code: CodeInternalError, Message: "no stream to the client for this request"}
	}
	m, err := r.sess.request(ctx, r.stream, method, params)
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, &abi.Error{Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data}
	}
	return m.Result, nil
}
