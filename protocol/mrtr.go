package protocol

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
)

// Multi round-trip requests (2026-07-28). A guest's elicitation/create,
// sampling/createMessage or roots/list in the modern era is not sent to the
// client: the host leaves it unanswered (host.ErrInputRequired) and the
// call ends with an input_required result listing those requests under the
// guest's own request ids, plus a sealed requestState. The client's retry
// carries inputResponses; the guest runs again from the start in a fresh
// instance, and its requests are answered from the state (answers of
// earlier rounds) and the retry's inputResponses.

// MetaGuestState is the params._meta key under which a retried call hands
// the guest the state it left with the wasmcp/state notification. Clients
// may not set it.
const MetaGuestState = "wasmcp/state"

// DefaultStateTTL is how long a requestState stays valid by default.
const DefaultStateTTL = 10 * time.Minute

// maxStateLen caps an encoded requestState.
const maxStateLen = 8 << 20

const stateVersion = 1

// stateEncoding is unpadded base64url; strict, so that no two encodings
// decode to the same bytes.
var stateEncoding = base64.RawURLEncoding.Strict()

// sealer seals and unseals request states with HMAC-SHA256.
type sealer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func newSealer(key []byte, ttl time.Duration) *sealer {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	if ttl <= 0 {
		ttl = DefaultStateTTL
	}
	return &sealer{key: bytes.Clone(key), ttl: ttl, now: time.Now}
}

// sealedState is what a requestState carries.
type sealedState struct {
	// Principal is a digest of the caller's principal.
	Principal string `json:"p"`
	// Method is the request's method.
	Method string `json:"m"`
	// Identity is a digest of what the request is about (tool, prompt or
	// resource and its arguments).
	Identity string `json:"i"`
	// Expires is the expiry, in Unix milliseconds.
	Expires int64 `json:"e"`
	// Answers are the input responses the guest used so far, by key.
	Answers map[string]json.RawMessage `json:"a,omitempty"`
	// Guest is the guest's own state (wasmcp/state).
	Guest json.RawMessage `json:"s,omitempty"`
}

// seal encodes st with its expiry set: base64url(version || mac || payload),
// the MAC covering version and payload.
func (s *sealer) seal(st *sealedState) (string, error) {
	st.Expires = s.now().Add(s.ttl).UnixMilli()
	payload, err := sonic.Marshal(st)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 1+sha256.Size, 1+sha256.Size+len(payload))
	buf[0] = stateVersion
	buf = append(buf, payload...)
	m := hmac.New(sha256.New, s.key)
	m.Write(buf[:1])
	m.Write(payload)
	copy(buf[1:], m.Sum(nil))
	return stateEncoding.EncodeToString(buf), nil
}

// Reasons a requestState is refused.
var (
	errStateInvalid = errors.New("invalid requestState")
	errStateExpired = errors.New("expired requestState")
)

// unseal verifies and decodes a requestState. The MAC is checked, in
// constant time, before anything is decoded.
func (s *sealer) unseal(token string) (*sealedState, error) {
	if len(token) == 0 || len(token) > maxStateLen || strings.ContainsAny(token, "\r\n") {
		// Go's base64 decoders skip CR and LF even in strict mode; a
		// token is only ever the exact text the sealer produced.
		return nil, errStateInvalid
	}
	buf, err := stateEncoding.DecodeString(token)
	if err != nil || len(buf) < 1+sha256.Size || buf[0] != stateVersion {
		return nil, errStateInvalid
	}
	payload := buf[1+sha256.Size:]
	m := hmac.New(sha256.New, s.key)
	m.Write(buf[:1])
	m.Write(payload)
	if !hmac.Equal(m.Sum(nil), buf[1:1+sha256.Size]) {
		return nil, errStateInvalid
	}
	var st sealedState
	if err := sonic.Unmarshal(payload, &st); err != nil {
		return nil, errStateInvalid
	}
	if s.now().UnixMilli() > st.Expires {
		return nil, errStateExpired
	}
	return &st, nil
}

// digest is a short, stable digest of b.
func digest16(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{0})
		h.Write(p)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// canonicalJSON re-encodes a JSON value with sorted object keys and no
// insignificant space, keeping numbers as written; nil for an absent or
// null value.
func canonicalJSON(raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v) // encoding/json sorts map keys
}

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
			Action  *string   `json:"action"`
			Content *rawValue `json:"content"`
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
			Role    *string  `json:"role"`
			Content rawValue `json:"content"`
		}
		if !isObject(ans) || sonic.Unmarshal(ans, &v) != nil || v.Role == nil || len(v.Content) == 0 {
			return false
		}
		return isObject(v.Content) || (len(v.Content) > 0 && v.Content[0] == '[')
	case abi.MethodListRoots:
		var v struct {
			Roots rawValue `json:"roots"`
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
		return errorf(CodeInvalidParams, "Invalid params: _meta."+MetaGuestState+" is reserved for the server")
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
			return errorf(CodeInvalidParams, "Invalid requestState: issued to another principal")
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
			p, err := withMeta(r.msg.Params, MetaGuestState, st.Guest)
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
func (r *request) inputRequired(reply *host.Reply) Response {
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
func (r *request) done(result []byte, cacheable bool) Response {
	if cacheable && r.inputs != nil && r.inputs.retry {
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
	return r.ok(result, cacheable)
}

// requiredCapability returns the -32021 error for a guest request to the
// client that the client's declared capabilities do not cover, nil when
// they do.
func (r *request) requiredCapability(method string, params []byte) *abi.Error {
	var need, what string
	switch method {
	case abi.MethodElicit:
		var p struct {
			Mode string `json:"mode"`
		}
		_ = sonic.Unmarshal(params, &p)
		var c struct {
			Elicitation *struct {
				Form *rawValue `json:"form"`
				URL  *rawValue `json:"url"`
			} `json:"elicitation"`
		}
		_ = sonic.Unmarshal(r.caps.Raw, &c)
		e := c.Elicitation
		switch {
		case p.Mode == "url":
			if e == nil || e.URL == nil {
				need, what = `{"elicitation":{"url":{}}}`, "URL-mode elicitation"
			}
		case e == nil:
			need, what = `{"elicitation":{}}`, "elicitation"
		case e.Form == nil && e.URL != nil:
			need, what = `{"elicitation":{"form":{}}}`, "form-mode elicitation"
		}
	case abi.MethodSample:
		var p struct {
			Tools          rawValue `json:"tools"`
			IncludeContext string   `json:"includeContext"`
		}
		_ = sonic.Unmarshal(params, &p)
		var c struct {
			Sampling *struct {
				Tools   *rawValue `json:"tools"`
				Context *rawValue `json:"context"`
			} `json:"sampling"`
		}
		_ = sonic.Unmarshal(r.caps.Raw, &c)
		s := c.Sampling
		switch {
		case s == nil:
			need, what = `{"sampling":{}}`, "sampling"
		case len(p.Tools) > 0 && string(p.Tools) != "null" && s.Tools == nil:
			need, what = `{"sampling":{"tools":{}}}`, "sampling with tools"
		case (p.IncludeContext == "thisServer" || p.IncludeContext == "allServers") && s.Context == nil:
			need, what = `{"sampling":{"context":{}}}`, "sampling with context"
		}
	case abi.MethodListRoots:
		if !r.caps.Roots {
			need, what = `{"roots":{}}`, "roots"
		}
	}
	if need == "" {
		return nil
	}
	return &abi.Error{
		Code:    abi.CodeMissingCapability,
		Message: "The client did not declare the " + what + " capability",
		Data:    []byte(`{"requiredCapabilities":` + need + `}`),
	}
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
	if ans, ok := r.inputs.take(host.InputKey(ctx), method); ok {
		return ans, nil
	}
	if e := r.requiredCapability(method, params); e != nil {
		return nil, e
	}
	return nil, host.ErrInputRequired
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
