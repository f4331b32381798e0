package guest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"sync"

	"github.com/wasmcp/wasmcp/abi"
)

// Context is the request a handler is serving and its channel to the
// client: progress, log messages, and requests (elicitation, sampling,
// roots) that the host forwards to the client. Its methods may be called
// from several goroutines.
type Context struct {
	srv    *Server
	sess   *session
	method string
	meta   json.RawMessage
}

// Method returns the request's method, e.g. "tools/call".
func (c *Context) Method() string { return c.method }

// Meta returns the request's params._meta as raw JSON (nil if absent).
func (c *Context) Meta() json.RawMessage { return c.meta }

// progressToken returns the request's _meta.progressToken, nil if none.
func (c *Context) progressToken() json.RawMessage {
	if len(c.meta) == 0 {
		return nil
	}
	var m struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if json.Unmarshal(c.meta, &m) != nil || len(m.Token) == 0 || string(m.Token) == "null" {
		return nil
	}
	return m.Token
}

// Progress sends a notifications/progress for the request's progress
// token; without a token (the client asked for no progress) it does
// nothing. progress should increase with every call; total <= 0 means the
// total is unknown and is left out, as is an empty message.
func (c *Context) Progress(progress, total float64, message string) {
	tok := c.progressToken()
	if tok == nil {
		return
	}
	p := object{{"progressToken", tok}, {"progress", progress}}
	if total > 0 {
		p = append(p, field{"total", total})
	}
	p = p.putString("message", message)
	c.sess.notify(abi.MethodProgress, p)
}

// Log levels of Context.Log, MCP's (RFC 5424) levels from least to most
// severe.
const (
	LevelDebug     = "debug"
	LevelInfo      = "info"
	LevelNotice    = "notice"
	LevelWarning   = "warning"
	LevelError     = "error"
	LevelCritical  = "critical"
	LevelAlert     = "alert"
	LevelEmergency = "emergency"
)

// Log sends a notifications/message with the given level (see the Level
// constants), the module name as logger, and data (any JSON value; an
// error is sent as its text). The host drops messages below the level the
// client set. For free-text diagnostics that should stay in the host's log,
// write to stderr instead.
func (c *Context) Log(level string, data any) {
	if err, ok := data.(error); ok {
		data = err.Error()
	}
	if _, err := marshal(data); err != nil {
		data = fmt.Sprint(data)
	}
	p := object{{"level", level}}.putString("logger", c.srv.name)
	p = append(p, field{"data", data})
	c.sess.notify(abi.MethodLog, p)
}

// ElicitResult is the client's answer to Context.Elicit.
type ElicitResult struct {
	// Action is "accept" (the user submitted the form), "decline" (the
	// user refused) or "cancel" (the user dismissed the request).
	Action string `json:"action"`
	// Content holds the submitted values when Action is "accept".
	Content map[string]any `json:"content,omitempty"`
}

// Elicitation actions, the values of ElicitResult.Action.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Decode decodes the submitted content into v (a pointer to a struct or
// map).
func (r *ElicitResult) Decode(v any) error {
	b, err := json.Marshal(r.Content)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Elicit asks the user, through the client, to fill in a form
// (elicitation/create) and waits for the answer. requestedSchema is the
// form's schema, a flat object of primitive properties: raw JSON (string,
// []byte, json.RawMessage), a map, a *Schema, or a struct value (or pointer
// to one) whose type's generated schema is used. A client that cannot
// elicit answers with an error, returned as *ClientError.
func (c *Context) Elicit(message string, requestedSchema any) (*ElicitResult, error) {
	sch, err := elicitSchema(requestedSchema)
	if err != nil {
		return nil, err
	}
	var res ElicitResult
	if err := c.request(abi.MethodElicit, map[string]any{"message": message, "requestedSchema": sch}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func elicitSchema(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, errors.New("guest: Elicit needs a requestedSchema")
	}
	switch v.(type) {
	case string, []byte, json.RawMessage, *Schema:
	default:
		t := reflect.TypeOf(v)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct {
			v = (&reflector{seen: map[reflect.Type]bool{}}).schema(t)
		}
	}
	raw, err := schemaJSON(v, true)
	if err != nil {
		return nil, fmt.Errorf("guest: Elicit requestedSchema: %v", err)
	}
	return raw, nil
}

// SamplingMessage is one message of a sampling request or its answer.
type SamplingMessage struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content Content `json:"content"`
}

// ModelPreferences are a sampling request's hints for the client's model
// choice; priorities range from 0 to 1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint suggests a model by (a substring of) its name.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// SampleParams are the params of a sampling/createMessage request.
// Messages and MaxTokens are required.
type SampleParams struct {
	Messages         []SamplingMessage `json:"messages"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"` // "none", "thisServer", "allServers"
	Metadata         map[string]any    `json:"metadata,omitempty"`
}

// SampleResult is the client's answer to Context.Sample.
type SampleResult struct {
	Role       string  `json:"role"`
	Content    Content `json:"content"`
	Model      string  `json:"model"`
	StopReason string  `json:"stopReason,omitempty"`
}

// Sample asks the client's language model for a completion
// (sampling/createMessage) and waits for the answer. A client that cannot
// sample, or a user who refuses, yields a *ClientError.
func (c *Context) Sample(params SampleParams) (*SampleResult, error) {
	if params.Messages == nil {
		params.Messages = []SamplingMessage{}
	}
	var res SampleResult
	if err := c.request(abi.MethodSample, params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Root is one of the client's roots: a file:// URI and an optional name.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ListRoots asks the client for its roots (roots/list) and waits for the
// answer. A client without roots support yields a *ClientError.
func (c *Context) ListRoots() ([]Root, error) {
	var res struct {
		Roots []Root `json:"roots"`
	}
	if err := c.request(abi.MethodListRoots, map[string]any{}, &res); err != nil {
		return nil, err
	}
	if res.Roots == nil {
		res.Roots = []Root{}
	}
	return res.Roots, nil
}

// request sends a request to the client and decodes the result into out.
func (c *Context) request(method string, params any, out any) error {
	s := c.sess
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.mu.Unlock()
	idRaw := json.RawMessage(strconv.FormatInt(id, 10))
	raw, err := marshal(params)
	if err != nil {
		return fmt.Errorf("guest: encoding %s params: %v", method, err)
	}
	if err := s.write(abi.Message{JSONRPC: "2.0", ID: idRaw, Method: method, Params: raw}); err != nil {
		return fmt.Errorf("guest: sending %s: %w", method, err)
	}
	resp, err := s.await(idKey(idRaw))
	if err != nil {
		return fmt.Errorf("guest: waiting for the answer to %s: %w", method, err)
	}
	return decodeAnswer(method, resp, out)
}

// decodeAnswer turns the client's answer to a request into out, or into a
// *ClientError when the client answered with an error.
func decodeAnswer(method string, resp *abi.Message, out any) error {
	if resp.Error != nil {
		return &ClientError{Method: method, Code: resp.Error.Code, Message: resp.Error.Message, Data: resp.Error.Data}
	}
	if len(resp.Result) == 0 {
		return fmt.Errorf("guest: the answer to %s has no result", method)
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("guest: decoding the answer to %s: %v", method, err)
	}
	return nil
}

// session is the guest's side of one instance's stdin and stdout.
type session struct {
	diag io.Writer

	wmu    sync.Mutex
	w      io.Writer
	wErr   error
	closed bool // the response is written; later output is dropped

	rmu   sync.Mutex
	r     *bufio.Reader
	rErr  error                   // the read error that ended stdin
	stash map[string]*abi.Message // responses read for another waiter

	mu     sync.Mutex
	nextID int64
}

func newSession(r io.Reader, w io.Writer, diag io.Writer) *session {
	return &session{r: bufio.NewReader(r), w: w, diag: diag, stash: map[string]*abi.Message{}}
}

// write sends one message as one line.
func (s *session) write(m abi.Message) error {
	b, err := marshal(m)
	if err != nil {
		return err
	}
	return s.writeLine(append(b, '\n'))
}

// writeLine writes one encoded message line.
func (s *session) writeLine(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errors.New("the response was already sent")
	}
	if s.wErr != nil {
		return s.wErr
	}
	if _, err := s.w.Write(b); err != nil {
		s.wErr = err
		return err
	}
	return nil
}

func (s *session) notify(method string, params any) {
	raw, err := marshal(params)
	if err != nil {
		return
	}
	s.write(abi.Message{JSONRPC: "2.0", Method: method, Params: raw})
}

// respond writes the final response and closes the output.
func (s *session) respond(id json.RawMessage, result any, rpcErr *Error) {
	if raw, ok := result.(encoded); ok && rpcErr == nil {
		// Our own encoding: compact, valid, one line. The envelope is
		// written around it instead of encoding it again.
		b := make([]byte, 0, len(raw)+len(id)+40)
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, id...)
		b = append(b, `,"result":`...)
		b = append(b, raw...)
		s.writeLine(append(b, "}\n"...))
	} else {
		s.write(responseMessage(id, result, rpcErr))
	}
	s.wmu.Lock()
	s.closed = true
	s.wmu.Unlock()
}

// responseMessage is the response with result, or with rpcErr if not nil
// or if result cannot be encoded.
func responseMessage(id json.RawMessage, result any, rpcErr *Error) abi.Message {
	m := abi.Message{JSONRPC: "2.0", ID: id}
	if rpcErr == nil {
		raw, err := marshal(result)
		if err != nil {
			rpcErr = &Error{Code: CodeInternalError, Message: "cannot encode the result: " + err.Error()}
		} else {
			m.Result = raw
		}
	}
	if rpcErr != nil {
		e := &abi.Error{Code: rpcErr.Code, Message: rpcErr.Message}
		if rpcErr.Data != nil {
			if d, err := marshal(rpcErr.Data); err == nil {
				e.Data = d
			}
		}
		m.Error = e
	}
	return m
}

func (s *session) writeErr() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wErr != nil {
		return fmt.Errorf("writing to stdout: %w", s.wErr)
	}
	return nil
}

// await reads stdin until the response with the given id key arrives
// (which another waiter may already have read and stashed). Lines that are
// not responses are ignored.
func (s *session) await(key string) (*abi.Message, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		if m, ok := s.stash[key]; ok {
			delete(s.stash, key)
			return m, nil
		}
		if s.rErr != nil {
			return nil, s.rErr
		}
		line, err := s.r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m abi.Message
			switch {
			case json.Unmarshal(line, &m) != nil:
				s.logf("ignoring a malformed line on stdin")
			case m.Method != "" || len(m.ID) == 0 || m.Result == nil && m.Error == nil:
				s.logf("ignoring a message on stdin that is not a response")
			default:
				s.stash[idKey(m.ID)] = &m
			}
		}
		if err != nil {
			if err == io.EOF {
				err = errors.New("stdin closed before the answer arrived")
			}
			s.rErr = err
		}
	}
}

func (s *session) logf(format string, args ...any) {
	if s.diag != nil {
		fmt.Fprintf(s.diag, format+"\n", args...)
	}
}

// idKey turns a JSON-RPC id into a map key: equal ids give equal keys
// whether the host wrote them as 1, 1.0 or with spaces.
func idKey(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "?" + string(raw)
	}
	switch x := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
		}
		return "n:" + string(x)
	case string:
		return "s:" + x
	}
	return "?" + string(raw)
}
