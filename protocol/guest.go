package protocol

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

// invoke runs a guest for the request with its cancellation tracked on the
// session, so notifications/cancelled (or the session's end) ends it.
func (r *request) invoke(mod Module, method string) (*contract.Reply, error) {
	return r.invokeCtx(r.ctx, mod, method)
}

// invokeCtx is invoke under ctx, a context of the request's.
func (r *request) invokeCtx(ctx context.Context, mod Module, method string) (*contract.Reply, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if r.sess != nil {
		defer r.sess.track(r.msg.ID, cancel)()
	}
	return r.callGuest(ctx, mod, method, r.callParams(), &peer{r: r, mod: mod})
}

// callGuest is the one sequence of a guest call for the request: the
// host-owned _meta goes into params, the guest runs with p as its peer,
// and the call is audited. invokeCtx (a call answered in place) and
// relay.run (a tools/call that may outlive its request) both run it.
func (r *request) callGuest(ctx context.Context, mod Module, method string, params []byte, p contract.Peer) (*contract.Reply, error) {
	params = r.guestMeta(mod, params)
	start := time.Now()
	reply, err := guestCall(ctx, mod, method, params, p)
	r.audit(mod, method, start, reply, err)
	return reply, err
}

// canceled reports whether err ended a call the client canceled; such a
// request gets no answer.
func canceled(err error) bool {
	return errors.Is(err, contract.ErrCanceled) && (errors.Is(err, ErrCanceledByClient) || errors.Is(err, ErrSessionClosed))
}

// guestFailure answers a failed non-tool guest call with -32603.
func (r *request) guestFailure(err error) Response {
	if canceled(err) {
		return Response{Era: r.era}
	}
	r.srv.failLog.warn(r.ctx, r.srv.log, "guest call failed", "method", r.msg.Method, "err", err)
	return r.fail(errorf(CodeInternalError, err.Error()))
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
	if r.hint.Simple {
		return nil, &abi.Error{Code: CodeMethodNotFound,
			Message: method + " is not available in simple mode: the server keeps no stream to the client"}
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
		return nil, m.Error
	}
	return hostResult(m.Result), nil
}
