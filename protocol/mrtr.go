package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// Multi round-trip requests (2026-07-28). A guest's elicitation/create,
// sampling/createMessage or roots/list in the modern era is not sent to the
// client: the host leaves it unanswered (contract.ErrInputRequired) and the
// call ends with an input_required result listing those requests under the
// guest's own request ids, plus a sealed requestState. The client's retry
// carries inputResponses; the guest runs again from the start in a fresh
// instance, and its requests are answered from the state (answers of
// earlier rounds) and the retry's inputResponses.

// inputRound is the MRTR state of one modern tools/call, prompts/get or
// resources/read: the answers the guest may get, and those it took.
type inputRound struct {
	retry    bool            // the request carried inputResponses or a requestState
	identity string          // digest of what the request is about; "" until needed
	guest    json.RawMessage // the guest's state from the requestState

	mu       sync.Mutex
	answers  map[string]json.RawMessage // from the state, then inputResponses
	consumed map[string]json.RawMessage
}

// take returns the answer for key if there is one of the right shape for
// method, and records that the guest used it.
func (in *inputRound) take(key, method string) ([]byte, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ans, ok := in.answers[key]
	if !ok || !validAnswer(method, ans) {
		return nil, false
	}
	if in.consumed == nil {
		in.consumed = map[string]json.RawMessage{}
	}
	in.consumed[key] = ans
	return ans, true
}

// validAnswer checks the shape of an input response for its request's
// method; a malformed answer counts as missing.
func validAnswer(method string, ans []byte) bool {
	switch method {
	case abi.MethodElicit:
		var v struct {
			Action  *string      `json:"action"`
			Content *jsonrpc.Raw `json:"content"`
		}
		if !isObject(ans) || sonic.Unmarshal(ans, &v) != nil || v.Action == nil {
			return false
		}
		switch *v.Action {
		case "accept", "decline", "cancel":
		default:
			return false
		}
		return v.Content == nil || isObject(*v.Content) || string(*v.Content) == "null"
	case abi.MethodSample:
		var v struct {
			Role    *string     `json:"role"`
			Content jsonrpc.Raw `json:"content"`
		}
		if !isObject(ans) || sonic.Unmarshal(ans, &v) != nil || v.Role == nil || len(v.Content) == 0 {
			return false
		}
		return isObject(v.Content) || (len(v.Content) > 0 && v.Content[0] == '[')
	case abi.MethodListRoots:
		var v struct {
			Roots jsonrpc.Raw `json:"roots"`
		}
		return isObject(ans) && sonic.Unmarshal(ans, &v) == nil && len(v.Roots) > 0 && v.Roots[0] == '['
	}
	return false
}

func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{'
}

// mrtrIdentity is what a request is about, for binding its requestState.
func (r *request) mrtrIdentity() (string, *Error) {
	switch r.msg.Method {
	case "resources/read":
		return digest16([]byte(r.msg.Method), []byte(r.p.URI)), nil
	default:
		args, err := canonicalJSON(r.p.Arguments)
		if err != nil {
			return "", errorf(CodeInvalidParams, "Invalid params: arguments")
		}
		return digest16([]byte(r.msg.Method), []byte(r.p.Name), args), nil
	}
}

// prepareInputs readies a tools/call, prompts/get or resources/read for
// multi round-trip requests: in the modern era it verifies the
// requestState, collects the answers the guest may get and, when the state
// carries the guest's own state, the params the guest is called with.
func (r *request) prepareInputs() *Error {
	if r.p.Meta != nil && len(r.p.Meta.GuestState) > 0 {
		return errorf(CodeInvalidParams, "Invalid params: _meta."+abi.MethodState+" is reserved for the server")
	}
	if r.era != Modern {
		return nil
	}
	in := &inputRound{}
	r.inputs = in
	resp := bytes.TrimSpace(r.p.InputResponses)
	if len(resp) > 0 && string(resp) != "null" {
		if resp[0] != '{' {
			return errorf(CodeInvalidParams, "Invalid params: inputResponses must be an object")
		}
		if err := sonic.Unmarshal(resp, &in.answers); err != nil {
			return errorf(CodeInvalidParams, "Invalid params: inputResponses must be an object")
		}
		in.retry = true
	}
	if r.p.RequestState != nil {
		in.retry = true
		// The request's identity is computed only when a state needs it
		// (here, or when sealing one), not on every call.
		id, perr := r.mrtrIdentity()
		if perr != nil {
			return perr
		}
		in.identity = id
		st, err := r.srv.sealer.unseal(*r.p.RequestState)
		switch {
		case errors.Is(err, errStateExpired):
			return errorf(CodeInvalidParams, "Invalid requestState: expired")
		case err != nil:
			return errorf(CodeInvalidParams, "Invalid requestState")
		case st.Principal != digest16([]byte(r.hint.Principal)):
			// Exactly what a forged state gets: nothing tells a caller
			// that the state exists for someone else.
			return errorf(CodeInvalidParams, "Invalid requestState")
		case st.Method != r.msg.Method || st.Identity != id:
			return errorf(CodeInvalidParams, "Invalid requestState: issued for another request")
		}
		// Answers the guest already acted on stay as they were.
		if len(st.Answers) > 0 && in.answers == nil {
			in.answers = make(map[string]json.RawMessage, len(st.Answers))
		}
		for k, v := range st.Answers {
			in.answers[k] = v
		}
		in.guest = st.Guest
		if len(st.Guest) > 0 {
			p, err := withMeta(r.msg.Params, abi.MethodState, st.Guest)
			if err != nil {
				return errorf(CodeInvalidParams, "Invalid params")
			}
			r.guestParams = p
		}
	}
	return nil
}

// withMeta returns params with _meta[key] set to value.
func withMeta(params []byte, key string, value []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := sonic.Unmarshal(params, &m); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok && isObject(raw) {
		if err := sonic.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
	}
	meta[key] = value
	mb, err := sonic.Marshal(meta)
	if err != nil {
		return nil, err
	}
	m["_meta"] = mb
	return sonic.Marshal(m)
}

// inputRequired answers a call whose guest waits for input: an
// input_required result with the guest's requests and a sealed state
// holding the answers it used so far.
func (r *request) inputRequired(reply *contract.Reply) Response {
	if r.era != Modern || r.inputs == nil {
		// Only the modern peer leaves requests to a retry.
		return r.fail(errorf(CodeInternalError, "guest requests left unanswered outside the 2026-07-28 era"))
	}
	in := r.inputs
	if in.identity == "" {
		id, perr := r.mrtrIdentity()
		if perr != nil {
			return r.fail(perr)
		}
		in.identity = id
	}
	in.mu.Lock()
	st := &sealedState{
		Principal: digest16([]byte(r.hint.Principal)),
		Method:    r.msg.Method,
		Identity:  in.identity,
		Answers:   in.consumed,
		Guest:     reply.State,
	}
	token, err := r.srv.sealer.seal(st)
	in.mu.Unlock()
	if err != nil {
		return r.fail(errorf(CodeInternalError, "cannot seal the request state: "+err.Error()))
	}
	b := make([]byte, 0, 256+len(token))
	b = append(b, `{"resultType":"input_required","inputRequests":`...)
	b = appendInputRequests(b, len(reply.InputRequests), func(i int) (string, string, []byte) {
		q := &reply.InputRequests[i]
		return q.Key, q.Method, q.Params
	})
	b = append(b, `,"requestState":"`...)
	b = append(b, token...)
	b = append(b, `",`...)
	b = append(b, r.srv.metaInfo...)
	b = append(b, '}')
	return Response{Body: ResultResponse(r.msg.ID, b), Era: r.era}
}

// done answers a guest's complete result; a cacheable result of a retry
// is marked uncacheable (ttlMs 0, private), as MRTR retries must not be
// cached.
func (r *request) done(result []byte, c cacheHint) Response {
	if c != noCache && r.inputs != nil && r.inputs.retry {
		res := bytes.TrimSpace(result)
		if len(res) > 1 && res[0] == '{' {
			b := make([]byte, 0, len(res)+40)
			b = append(b, `{"ttlMs":0,"cacheScope":"private"`...)
			if rest := bytes.TrimSpace(res[1:]); len(rest) > 0 && rest[0] != '}' {
				b = append(b, ',')
			}
			result = append(b, bytes.TrimSpace(res[1:])...)
		}
	}
	return r.ok(result, c)
}

// modernRequest serves a guest's request to the client in the modern era,
// where the server never sends requests to the client.
func (p *peer) modernRequest(ctx context.Context, method string, params []byte) ([]byte, error) {
	r := p.r
	if r.inputs == nil {
		return nil, &abi.Error{Code: CodeMethodNotFound,
			Message: "requests to the client are not available for " + r.msg.Method + " in the " + V20260728 + " revision"}
	}
	if !isObject(params) {
		return nil, &abi.Error{Code: CodeInvalidParams, Message: method + " params must be an object"}
	}
	if ans, ok := r.inputs.take(contract.InputKey(ctx), method); ok {
		return hostResult(ans), nil
	}
	if e := r.requiredCapability(method, params); e != nil {
		return nil, e
	}
	return nil, contract.ErrInputRequired
}

// appendInputRequests appends an inputRequests object, {key: {method,
// params}}, for n requests that at returns.
func appendInputRequests(b []byte, n int, at func(i int) (key, method string, params []byte)) []byte {
	b = append(b, '{')
	for i := 0; i < n; i++ {
		key, method, params := at(i)
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, key)
		b = append(b, `:{"method":`...)
		b = appendString(b, method)
		b = append(b, `,"params":`...)
		b = append(b, params...)
		b = append(b, '}')
	}
	return append(b, '}')
}

// known returns a copy of every answer of the round.
func (in *inputRound) known() map[string]json.RawMessage {
	in.mu.Lock()
	defer in.mu.Unlock()
	return maps.Clone(in.answers)
}
