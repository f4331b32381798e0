package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"

	"github.com/wasmcp/wasmcp/abi"
)

// Server is a guest module: its name, version and the tools, resources,
// templates, prompts and completions registered on it. Register everything
// in main, then call Run.
type Server struct {
	name, version, instructions string

	tools         []*toolEntry
	toolIndex     map[string]*toolEntry
	resources     []*resourceEntry
	resourceIndex map[string]*resourceEntry
	templates     []*templateEntry
	prompts       []*promptEntry
	promptIndex   map[string]*promptEntry
	completions   map[string]CompletionHandler
	skills        []Skill // skills.go

	diag io.Writer // stderr: free text for the host's log; nil in Serve
}

// Option configures a Server.
type Option func(*Server)

// WithInstructions sets the instructions the module offers the client (how
// and when to use its tools). The host may combine them with other
// modules' instructions.
func WithInstructions(text string) Option {
	return func(s *Server) { s.instructions = text }
}

// New returns a Server for the module with the given name and version. The
// name is also the logger name of Context.Log messages.
func New(name, version string, opts ...Option) *Server {
	s := &Server{
		name:          name,
		version:       version,
		toolIndex:     map[string]*toolEntry{},
		resourceIndex: map[string]*resourceEntry{},
		promptIndex:   map[string]*promptEntry{},
		completions:   map[string]CompletionHandler{},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Prepare builds ahead of any request what serving one would otherwise
// build on first use: encoding/json's encoders and decoders for a
// tools/call's params and result and for every typed tool's input and
// output types. Package reactor calls it just
// before the host takes its snapshot, so that every call starts with them
// built; a command module has no use for it.
func (s *Server) Prepare() {
	// The request envelope and a tool result, as every tools/call
	// decodes and encodes them.
	_ = json.Unmarshal([]byte(`{"_meta":{}}`), &requestMeta{})
	_ = json.Unmarshal([]byte(`{"name":"","arguments":{}}`), &callParams{})
	_, _ = marshalResult(&ToolResult{Content: []Content{Text("")}, StructuredContent: encoded(`{}`)})
	for _, t := range s.tools {
		if t.warm != nil {
			t.warm()
		}
	}
}

// Name returns the module name given to New.
func (s *Server) Name() string { return s.name }

// Run serves the one request of this instance on stdin/stdout (see Serve)
// and returns; main should return right after it, so the module exits 0.
// If no request could be read or the answer could not be written, Run
// reports the problem on stderr and exits with status 1.
func (s *Server) Run() {
	s.diag = os.Stderr
	if err := s.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", s.name, err)
		os.Exit(1)
	}
}

// Serve reads one JSON-RPC request line from r, handles it and writes the
// response line (preceded by any notifications and requests the handler
// sends) to w. Responses to the handler's requests (Context.Elicit, Sample,
// ListRoots) are read from r as further lines.
//
// Protocol problems are answered on w, not returned: a line that is not
// JSON gets a -32700 error, a message that is not a request -32600, an
// unknown method -32601. Serve returns an error only if no request could be
// read or writing to w failed.
func (s *Server) Serve(r io.Reader, w io.Writer) error {
	sess := newSession(r, w, s.diag)
	var line []byte
	for {
		l, err := sess.r.ReadBytes('\n')
		if len(bytes.TrimSpace(l)) > 0 {
			line = l
			break
		}
		if err != nil {
			if err == io.EOF {
				return errors.New("no request on stdin")
			}
			return fmt.Errorf("reading the request: %w", err)
		}
	}
	var req abi.Message
	if err := json.Unmarshal(line, &req); err != nil {
		sess.respond(json.RawMessage("null"), nil, &Error{Code: CodeParseError, Message: "parse error: " + err.Error()})
		return sess.writeErr()
	}
	if len(req.ID) == 0 || string(req.ID) == "null" {
		if req.Method != "" {
			return nil // a notification: nothing to answer
		}
		sess.respond(json.RawMessage("null"), nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: no method and no id"})
		return sess.writeErr()
	}
	if req.Method == "" {
		sess.respond(req.ID, nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: no method"})
		return sess.writeErr()
	}
	c := &Context{srv: s, sess: sess, method: req.Method}
	result, rpcErr := s.handle(c, &req)
	sess.respond(req.ID, result, rpcErr)
	return sess.writeErr()
}

// handle dispatches one request and returns its result or error.
func (s *Server) handle(c *Context, req *abi.Message) (any, *Error) {
	var meta requestMeta
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &meta); err != nil {
			return nil, InvalidParams("invalid params: %v", err)
		}
	}
	c.meta = meta.Meta
	switch req.Method {
	case abi.MethodDescribe:
		return s.describe(req.Params)
	case abi.MethodToolsCall:
		return s.callTool(c, req.Params)
	case abi.MethodResourceRead:
		return s.readResource(c, req.Params)
	case abi.MethodPromptsGet:
		return s.getPrompt(c, req.Params)
	case abi.MethodComplete:
		return s.complete(c, req.Params)
	}
	return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
}

// Description returns what the module answers to wasmcp/describe.
func (s *Server) Description() abi.Description {
	d := abi.Description{
		ABIVersion:   abi.Version,
		Name:         s.name,
		Version:      s.version,
		Instructions: s.instructions,
		Completions:  len(s.completions) > 0,
	}
	for _, t := range s.tools {
		d.Tools = append(d.Tools, t.def)
	}
	for _, r := range s.resources {
		d.Resources = append(d.Resources, r.def)
	}
	for _, t := range s.templates {
		d.ResourceTemplates = append(d.ResourceTemplates, t.def)
	}
	for _, p := range s.prompts {
		d.Prompts = append(d.Prompts, p.def)
	}
	d.Skills = s.skills
	return d
}

func (s *Server) describe(params json.RawMessage) (any, *Error) {
	var p abi.DescribeParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, InvalidParams("invalid describe params: %v", err)
		}
	}
	// A host that lists no versions at all is taken to speak v1.
	if p.ABIVersions != nil && !slices.Contains(p.ABIVersions, abi.Version) {
		return nil, &Error{
			Code:    CodeInvalidParams,
			Message: fmt.Sprintf("module %s speaks wasmcp ABI v%d; the host speaks %v", s.name, abi.Version, p.ABIVersions),
			Data:    map[string]any{"abiVersion": abi.Version},
		}
	}
	return s.Description(), nil
}

// requestMeta is the part of every request's params the server reads
// before dispatching.
type requestMeta struct {
	Meta json.RawMessage `json:"_meta"`
}

// callParams are a tools/call request's params.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (s *Server) callTool(c *Context, params json.RawMessage) (any, *Error) {
	var p callParams
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	t := s.toolIndex[p.Name]
	if t == nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "unknown tool: " + p.Name, Data: map[string]string{"name": p.Name}}
	}
	args := p.Arguments
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	var res *ToolResult
	err := s.protect("tool "+p.Name, func() error {
		var err error
		res, err = t.call(c, args)
		return err
	})
	if err != nil {
		if e := toolRPCError(err); e != nil {
			return nil, e
		}
		return ErrorResult(err.Error()), nil
	}
	if res == nil {
		res = &ToolResult{}
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	// Encode here, so that a result that cannot be encoded still gets an
	// answer the client understands.
	raw, mErr := marshalResult(res)
	if mErr != nil {
		return ErrorResult("cannot encode the tool's result: " + mErr.Error()), nil
	}
	return encoded(raw), nil
}

// encoded is JSON the SDK encoded itself (with marshal): valid, compact
// and on one line, so it is written into a response as it is, not
// scanned and compacted again.
type encoded []byte

// MarshalJSON implements json.Marshaler.
func (e encoded) MarshalJSON() ([]byte, error) { return e, nil }

// marshalResult encodes a tool result; structured content the SDK encoded
// itself (a typed tool's output) is copied in as it is.
func marshalResult(res *ToolResult) ([]byte, error) {
	sc, ok := res.StructuredContent.(encoded)
	if !ok {
		return marshal(res)
	}
	r := *res
	r.StructuredContent = nil
	b, err := marshal(&r) // {"content":[...],...}: content is never omitted
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(sc)+24)
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"structuredContent":`...)
	out = append(out, sc...)
	return append(out, '}'), nil
}

func (s *Server) readResource(c *Context, params json.RawMessage) (any, *Error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	var contents []ResourceContents
	mime := ""
	var err error
	if r := s.resourceIndex[p.URI]; r != nil {
		mime = r.def.MimeType
		err = s.protect("resource "+p.URI, func() (e error) {
			contents, e = r.h(c, p.URI)
			return e
		})
	} else {
		var t *templateEntry
		var vars map[string]string
		for _, e := range s.templates {
			if v, ok := e.tmpl.MatchStrict(p.URI); ok {
				t, vars = e, v
				break
			}
		}
		if t == nil {
			return nil, ResourceNotFound(p.URI)
		}
		mime = t.def.MimeType
		err = s.protect("resource "+p.URI, func() (e error) {
			contents, e = t.h(c, p.URI, vars)
			return e
		})
	}
	if err != nil {
		return nil, rpcError(err)
	}
	if contents == nil {
		contents = []ResourceContents{}
	}
	for i := range contents {
		if contents[i].URI == "" {
			contents[i].URI = p.URI
		}
		if contents[i].MimeType == "" {
			contents[i].MimeType = mime
		}
	}
	return map[string]any{"contents": contents}, nil
}

func (s *Server) getPrompt(c *Context, params json.RawMessage) (any, *Error) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	pr := s.promptIndex[p.Name]
	if pr == nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "unknown prompt: " + p.Name, Data: map[string]string{"name": p.Name}}
	}
	if p.Arguments == nil {
		p.Arguments = map[string]string{}
	}
	for _, a := range pr.def.Arguments {
		if a.Required && p.Arguments[a.Name] == "" {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("prompt %s: missing required argument %q", p.Name, a.Name),
				Data: map[string]string{"argument": a.Name}}
		}
	}
	var res *PromptResult
	err := s.protect("prompt "+p.Name, func() (e error) {
		res, e = pr.h(c, p.Arguments)
		return e
	})
	if err != nil {
		return nil, rpcError(err)
	}
	if res == nil {
		res = &PromptResult{}
	}
	if res.Messages == nil {
		res.Messages = []PromptMessage{}
	}
	if res.Description == "" {
		res.Description = pr.def.Description
	}
	return res, nil
}

// maxCompletionValues is MCP's cap on values in one completion answer.
const maxCompletionValues = 100

func (s *Server) complete(c *Context, params json.RawMessage) (any, *Error) {
	var p struct {
		Ref      CompletionRef `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
		Context struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"context"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	values := []string{}
	if h := s.completions[p.Ref.key(p.Argument.Name)]; h != nil {
		ctx := p.Context.Arguments
		if ctx == nil {
			ctx = map[string]string{}
		}
		err := s.protect("completion", func() (e error) {
			values, e = h(c, p.Argument.Value, ctx)
			return e
		})
		if err != nil {
			return nil, rpcError(err)
		}
		if values == nil {
			values = []string{}
		}
	}
	total := len(values)
	hasMore := total > maxCompletionValues
	if hasMore {
		values = values[:maxCompletionValues]
	}
	return object{{"completion", object{{"values", values}, {"total", total}, {"hasMore", hasMore}}}}, nil
}

// protect runs f and turns a panic into an error (logging the stack on
// stderr, which goes to the host's log).
func (s *Server) protect(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked: %v", what, r)
			if s.diag != nil {
				fmt.Fprintf(s.diag, "%s: %v\n%s", s.name, err, debug.Stack())
			}
		}
	}()
	return f()
}

// rpcError converts a handler's error into a JSON-RPC error: an *Error
// (possibly wrapped) as is, anything else as an internal error.
func rpcError(err error) *Error {
	if e := toolRPCError(err); e != nil {
		return e
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

func unmarshalParams(params json.RawMessage, v any) *Error {
	if len(params) == 0 {
		return InvalidParams("missing params")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return InvalidParams("invalid params: %v", err)
	}
	return nil
}

// marshal is json.Marshal without HTML escaping (text stays readable).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
