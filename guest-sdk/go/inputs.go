package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/wasmcp/wasmcp/abi"
)

// CodeMissingCapability is the JSON-RPC error code of a request to the
// client that the client did not declare the capability for; the error's
// data is {"requiredCapabilities": {...}}. A tool handler that returns
// such a *ClientError (possibly wrapped) answers the call with that
// JSON-RPC error, which is what MCP prescribes for a server that cannot
// do without the capability.
const CodeMissingCapability = abi.CodeMissingCapability

// IsMissingCapability reports whether err is (or wraps) a *ClientError
// saying the client did not declare the capability the request needs. A
// guest may then fall back to another kind of input, or return err.
func IsMissingCapability(err error) bool {
	var ce *ClientError
	return errors.As(err, &ce) && ce.Code == CodeMissingCapability
}

// ProtocolError wraps e so that a tool handler returning it (possibly
// wrapped again) answers the call with the JSON-RPC error e instead of an
// error result. Use it for errors about the request itself, not about the
// tool's work: a model should see the latter, as an error result.
func ProtocolError(e *Error) error { return &protocolError{e} }

type protocolError struct{ e *Error }

func (p *protocolError) Error() string { return p.e.Error() }
func (p *protocolError) Unwrap() error { return p.e }

// toolRPCError returns the JSON-RPC error a tool handler's error stands
// for, nil when it is an ordinary failure (an error result).
func toolRPCError(err error) *Error {
	var pe *protocolError
	if errors.As(err, &pe) {
		return pe.e
	}
	var ce *ClientError
	if errors.As(err, &ce) && ce.Code == CodeMissingCapability {
		e := &Error{Code: ce.Code, Message: ce.Message}
		if len(ce.Data) > 0 {
			e.Data = ce.Data
		}
		return e
	}
	return nil
}

// ClientCapabilities is what the client declared it can do, as the
// request's _meta carries it (MCP 2026-07-28 puts it on every request).
// Before that revision the capabilities are negotiated once per session and
// the guest does not see them: Known is false, and the way to find out is
// to make the request — a client that cannot answer it gets the guest a
// *ClientError with CodeMissingCapability.
type ClientCapabilities struct {
	Known           bool // the request carried the client's capabilities
	Sampling        bool // sampling/createMessage
	SamplingTools   bool // sampling with tools
	SamplingContext bool // sampling with includeContext other than "none"
	Elicitation     bool // elicitation/create (form mode, unless only URL is declared)
	ElicitationURL  bool // URL-mode elicitation
	Roots           bool // roots/list
	// Raw is the capabilities object as the client sent it.
	Raw json.RawMessage
}

// ClientCapabilities returns the capabilities in the request's
// _meta["io.modelcontextprotocol/clientCapabilities"].
func (c *Context) ClientCapabilities() ClientCapabilities {
	var m struct {
		Caps json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if len(c.meta) == 0 || json.Unmarshal(c.meta, &m) != nil || len(m.Caps) == 0 || m.Caps[0] != '{' {
		return ClientCapabilities{}
	}
	var v struct {
		Sampling *struct {
			Tools   json.RawMessage `json:"tools"`
			Context json.RawMessage `json:"context"`
		} `json:"sampling"`
		Elicitation *struct {
			Form json.RawMessage `json:"form"`
			URL  json.RawMessage `json:"url"`
		} `json:"elicitation"`
		Roots json.RawMessage `json:"roots"`
	}
	if json.Unmarshal(m.Caps, &v) != nil {
		return ClientCapabilities{}
	}
	cc := ClientCapabilities{Known: true, Raw: m.Caps, Roots: v.Roots != nil}
	if s := v.Sampling; s != nil {
		cc.Sampling, cc.SamplingTools, cc.SamplingContext = true, s.Tools != nil, s.Context != nil
	}
	if e := v.Elicitation; e != nil {
		cc.ElicitationURL = e.URL != nil
		cc.Elicitation = e.Form != nil || e.URL == nil
	}
	return cc
}

// Pending is a request to the client that was sent and whose answer has
// not been read yet: start several with StartElicit, StartSample and
// StartListRoots, then read their answers (in any order) or WaitAll.
//
// Sending every request before waiting for any matters under MCP
// 2026-07-28, where the client answers a server's questions only by
// retrying the whole call: the host collects the questions a guest waits
// for and hands them to the client all at once, so a guest that starts all
// it needs gets one round trip instead of one per question.
type Pending struct {
	c       *Context
	method  string
	key     string
	sendErr error

	once sync.Once
	resp *abi.Message
	err  error
}

// Key returns the request's key (its JSON-RPC id as text).
func (p *Pending) Key() string { return p.key }

// wait reads the answer once.
func (p *Pending) wait() (*abi.Message, error) {
	p.once.Do(func() {
		if p.sendErr != nil {
			p.err = p.sendErr
			return
		}
		p.resp, p.err = p.c.sess.await(idKey(p.id()))
		if p.err != nil {
			p.err = fmt.Errorf("guest: waiting for the answer to %s: %w", p.method, p.err)
		}
	})
	return p.resp, p.err
}

func (p *Pending) id() json.RawMessage {
	if isDigits(p.key) {
		return json.RawMessage(p.key)
	}
	b, _ := json.Marshal(p.key)
	return b
}

// decode waits for the answer and decodes its result into out.
func (p *Pending) decode(method string, out any) error {
	if p.method != method {
		return fmt.Errorf("guest: the request %q is a %s, not a %s", p.key, p.method, method)
	}
	resp, err := p.wait()
	if err != nil {
		return err
	}
	return decodeAnswer(method, resp, out)
}

// Elicit waits for the answer to a request started with StartElicit.
func (p *Pending) Elicit() (*ElicitResult, error) {
	var res ElicitResult
	if err := p.decode(abi.MethodElicit, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Sample waits for the answer to a request started with StartSample.
func (p *Pending) Sample() (*SampleResult, error) {
	var res SampleResult
	if err := p.decode(abi.MethodSample, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Roots waits for the answer to a request started with StartListRoots.
func (p *Pending) Roots() ([]Root, error) {
	var res struct {
		Roots []Root `json:"roots"`
	}
	if err := p.decode(abi.MethodListRoots, &res); err != nil {
		return nil, err
	}
	if res.Roots == nil {
		res.Roots = []Root{}
	}
	return res.Roots, nil
}

// WaitAll waits until every request has its answer and returns the first
// error among them (a *ClientError for a request the client refused). The
// answers are then read with the requests' Elicit, Sample or Roots.
func (c *Context) WaitAll(ps ...*Pending) error {
	var first error
	for _, p := range ps {
		resp, err := p.wait()
		if err == nil && resp.Error != nil {
			err = &ClientError{Method: p.method, Code: resp.Error.Code, Message: resp.Error.Message, Data: resp.Error.Data}
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// checkKey refuses keys the SDK could confuse with its own request ids.
func checkKey(key string) error {
	if key == "" || isDigits(key) {
		return fmt.Errorf("guest: request key %q: must be non-empty and not all digits (the SDK numbers its own requests)", key)
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// start sends a request under key ("" for the SDK's next number).
func (c *Context) start(key, method string, params any) *Pending {
	p := &Pending{c: c, method: method, key: key}
	if key == "" {
		c.sess.mu.Lock()
		c.sess.nextID++
		p.key = strconv.FormatInt(c.sess.nextID, 10)
		c.sess.mu.Unlock()
	} else if err := checkKey(key); err != nil {
		p.sendErr = err
		return p
	}
	raw, err := marshal(params)
	if err != nil {
		p.sendErr = fmt.Errorf("guest: encoding %s params: %v", method, err)
		return p
	}
	if err := c.sess.write(abi.Message{JSONRPC: "2.0", ID: p.id(), Method: method, Params: raw}); err != nil {
		p.sendErr = fmt.Errorf("guest: sending %s: %w", method, err)
	}
	return p
}

// StartElicit sends an elicitation/create request under key without
// waiting for the answer (see Elicit for the schema). key names the
// request: under MCP 2026-07-28 it is the key of the client's
// inputResponses, so it must stay the same from one run of the call to the
// next; "" picks the SDK's next number.
func (c *Context) StartElicit(key, message string, requestedSchema any) *Pending {
	sch, err := elicitSchema(requestedSchema)
	if err != nil {
		return &Pending{c: c, method: abi.MethodElicit, key: key, sendErr: err}
	}
	return c.start(key, abi.MethodElicit, map[string]any{"message": message, "requestedSchema": sch})
}

// StartSample sends a sampling/createMessage request under key without
// waiting for the answer.
func (c *Context) StartSample(key string, params SampleParams) *Pending {
	if params.Messages == nil {
		params.Messages = []SamplingMessage{}
	}
	return c.start(key, abi.MethodSample, params)
}

// StartListRoots sends a roots/list request under key without waiting for
// the answer.
func (c *Context) StartListRoots(key string) *Pending {
	return c.start(key, abi.MethodListRoots, map[string]any{})
}

// ElicitKey is Elicit with the request's key chosen by the guest.
func (c *Context) ElicitKey(key, message string, requestedSchema any) (*ElicitResult, error) {
	return c.StartElicit(key, message, requestedSchema).Elicit()
}

// SampleKey is Sample with the request's key chosen by the guest.
func (c *Context) SampleKey(key string, params SampleParams) (*SampleResult, error) {
	return c.StartSample(key, params).Sample()
}

// ListRootsKey is ListRoots with the request's key chosen by the guest.
func (c *Context) ListRootsKey(key string) ([]Root, error) {
	return c.StartListRoots(key).Roots()
}

// ToolsListChanged tells the clients listening for it that the server's
// tool list changed (notifications/tools/list_changed).
func (c *Context) ToolsListChanged() { c.sess.notify(abi.MethodToolsListChanged, map[string]any{}) }

// PromptsListChanged tells the clients listening for it that the prompt
// list changed (notifications/prompts/list_changed).
func (c *Context) PromptsListChanged() { c.sess.notify(abi.MethodPromptsListChanged, map[string]any{}) }

// ResourcesListChanged tells the clients listening for it that the
// resource list changed (notifications/resources/list_changed).
func (c *Context) ResourcesListChanged() {
	c.sess.notify(abi.MethodResourcesListChanged, map[string]any{})
}

// ResourceUpdated tells the clients subscribed to uri that the resource
// changed (notifications/resources/updated). The host forwards it only for
// a URI this module serves (one of its resources, or one matching one of
// its templates).
func (c *Context) ResourceUpdated(uri string) {
	c.sess.notify(abi.MethodResourceUpdated, map[string]any{"uri": uri})
}

// metaGuestState is the _meta key under which the host hands back the
// state set with SetState.
const metaGuestState = "wasmcp/state"

// State returns the state this call left with SetState in its previous
// run, nil on a first run. Under MCP 2026-07-28 a call whose requests to
// the client must be answered by the client's retry runs again from the
// start in a fresh instance; the host keeps the state, sealed against
// tampering, in the request state the client echoes, and hands it back
// here.
func (c *Context) State() json.RawMessage {
	var m struct {
		State json.RawMessage `json:"wasmcp/state"`
	}
	if len(c.meta) == 0 || json.Unmarshal(c.meta, &m) != nil || string(m.State) == "null" {
		return nil
	}
	return m.State
}

// SetState leaves v (encoded as JSON) for the call's next run, should it
// end waiting for the client's input (see State). The last value set
// counts. Guests that are deterministic up to their requests to the client
// need no state: their next run asks the same questions and the host
// answers the ones already answered.
func (c *Context) SetState(v any) error {
	raw, err := marshal(v)
	if err != nil {
		return fmt.Errorf("guest: encoding the state: %v", err)
	}
	return c.sess.write(abi.Message{JSONRPC: "2.0", Method: metaGuestState, Params: json.RawMessage(`{"state":` + string(raw) + `}`)})
}
