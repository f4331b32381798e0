package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/tasks"
)

// Options configure a Server.
type Options struct {
	// Name and Version are the server's implementation info.
	Name, Version string
	// Instructions are sent to clients in initialize and server/discover.
	Instructions string
	// PageSize is the number of items on one page of a list; 0 means 50.
	PageSize int
	// CacheTTL is the ttlMs of modern-era cacheable results; 0 means 60 s.
	CacheTTL time.Duration
	// Logger receives protocol events; nil means slog.Default().
	Logger *slog.Logger
	// StateKey is the HMAC-SHA256 key that seals the requestState of
	// input_required results; replicas behind one address must share it.
	// Empty means 32 random bytes, so states do not survive a restart.
	StateKey []byte
	// StateTTL is how long a requestState stays valid; 0 means
	// DefaultStateTTL (10 minutes).
	StateTTL time.Duration
	// Tasks keeps the server's tasks; nil means an in-memory manager with
	// the default limits. The server takes over its OnChange.
	Tasks *tasks.Manager
	// TaskInline is how long a modern tools/call that may become a task
	// runs inline before it does; 0 means DefaultTaskInline (100 ms).
	TaskInline time.Duration
	// Fanout, when set, also carries the list changes and resource
	// updates guests announce to the other replicas of a deployment,
	// which deliver them with Broadcast.
	Fanout Fanout
	// Access, when set, decides which tools, resources and prompts each
	// caller may list and use (the modules' grants); nil allows all.
	Access AccessFunc
	// StepUp, when set, names the scopes that would let the caller call a
	// tool Access hides from it: a tools/call of such a tool is refused
	// with a Response.Refusal of *InsufficientScope (HTTP: 403
	// insufficient_scope naming them) instead of "Unknown tool". Lists
	// keep hiding the tool.
	StepUp ScopeFunc
	// GuestMeta, when set, says what a guest learns of its caller.
	GuestMeta GuestMetaFunc
	// Audit, when set, receives a record of every finished guest call.
	Audit AuditFunc
	// ValidationBudget bounds the host's validation of one call's
	// arguments and of its structuredContent; a validation past it (or
	// past the request's end) is a tool error. 0 means
	// DefaultValidationBudget (1 s). Schemas are bounded at load
	// (internal/schema), so a validation this long is rare.
	ValidationBudget time.Duration
	// Observer receives tool calls and task changes, for metrics; nil
	// measures nothing.
	Observer Observer
	// Tracer starts a span per request and per tool call; nil traces
	// nothing.
	Tracer Tracer
}

// DefaultValidationBudget is the default Options.ValidationBudget.
const DefaultValidationBudget = time.Second

// Fanout carries a guest's announcement (a list-changed method, or
// notifications/resources/updated with its uri) to other replicas.
type Fanout interface {
	Publish(method, uri string)
}

// Server answers MCP requests from the current Catalog. It is safe for
// concurrent use; the catalog may be swapped at any time.
type Server struct {
	opts       Options
	log        *slog.Logger
	failLog    *rateLog // failed calls' warnings, at a bounded rate (ratelog.go)
	cat        atomic.Pointer[Catalog]
	serverInfo []byte // {"name":…,"version":…}
	metaInfo   []byte // "_meta":{"io.modelcontextprotocol/serverInfo":{…}}

	mu        sync.Mutex
	listeners map[*Listener]struct{}
	catSwap   chan struct{} // closed at the next SetCatalog (loading.go); under mu

	loading atomic.Pointer[loading] // the initial load under way, if any (StartLoading)
	loadCut atomic.Bool             // the initial load was cut by shutdown (InterruptLoading)

	sealer   *sealer       // seals MRTR request states
	subsDone chan struct{} // closed by CloseSubscriptions
	subsOnce sync.Once

	tasks      *tasks.Manager
	taskInline time.Duration
	live       map[string]*liveTask // legacy tasks whose guest runs here (under mu)
	observer   Observer
	tracer     Tracer
}

// NewServer creates a server with an empty catalog.
func NewServer(opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "wasmcp"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ValidationBudget <= 0 {
		opts.ValidationBudget = DefaultValidationBudget
	}
	if opts.TaskInline <= 0 {
		opts.TaskInline = DefaultTaskInline
	}
	if opts.Tasks == nil {
		// An in-memory store cannot fail to recover.
		opts.Tasks, _ = tasks.NewManager(context.Background(), tasks.NewMemory(), tasks.Options{Logger: opts.Logger})
	}
	s := &Server{opts: opts, log: opts.Logger, failLog: newRateLog(), listeners: map[*Listener]struct{}{},
		sealer: newSealer(opts.StateKey, opts.StateTTL), subsDone: make(chan struct{}),
		tasks: opts.Tasks, taskInline: opts.TaskInline, live: map[string]*liveTask{}, observer: opts.Observer, tracer: opts.Tracer}
	s.tasks.OnChange(s.taskChanged)
	s.serverInfo, _ = sonic.Marshal(implementation{Name: opts.Name, Version: opts.Version})
	s.metaInfo = append(append([]byte(`"_meta":{"`+MetaServerInfo+`":`), s.serverInfo...), '}')
	empty, _ := NewCatalog(nil, s.log)
	s.cat.Store(empty)
	return s
}

// implementation is the serverInfo object, encoded with a fixed key order.
type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Tasks returns the server's task manager.
func (s *Server) Tasks() *tasks.Manager { return s.tasks }

// Listeners returns the number of subscriptions/listen streams open.
func (s *Server) Listeners() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listeners)
}

// Catalog returns the current catalog.
func (s *Server) Catalog() *Catalog { return s.cat.Load() }

// Response is the answer to one message.
type Response struct {
	// Body is the JSON-RPC response; nil when there is nothing to answer
	// (a notification, a response, a call the client canceled).
	Body []byte
	// Code is the JSON-RPC error code of Body, 0 for a result.
	Code int
	// Era is the era the request was served in.
	Era Era
	// Refusal, when set, is why the request was refused in a way the
	// transport may answer in its own terms: *InsufficientScope (HTTP
	// answers 403 with a WWW-Authenticate scope challenge). Body holds the
	// JSON-RPC error for a transport that has no such terms.
	Refusal error
}

// Hint is what the transport knows about a request beyond its body.
type Hint struct {
	// Version is the revision the transport declares (the
	// MCP-Protocol-Version header), "" when none.
	Version string
	// CheckHeaders, when set, is called for a modern request once its
	// _meta is known to be well formed and before its version is checked,
	// so header/body mismatches are reported in the order the 2026-07-28
	// transport names.
	CheckHeaders func(info RequestInfo) *Error
	// Principal is the authenticated caller, "" when none.
	Principal string
	// Simple says the transport answers each request with one body and
	// keeps neither session nor stream (mcphttp's simple mode): nothing
	// reaches the client but the response, so the server advertises no
	// list changes, subscriptions or logging, and refuses what would
	// need a stream with "not available in simple mode".
	Simple bool
	// LoadWaited says the transport already held the request for the
	// initial load (Server.AwaitLoad): Handle does not hold it again.
	LoadWaited bool
	// idClaimed says HandleBatch holds the request's id in its session.
	idClaimed bool
}

// RequestInfo is what a transport may compare its headers against.
type RequestInfo struct {
	Method          string
	ProtocolVersion string
	// Name is params.name, params.uri or params.taskId, as Mcp-Name carries.
	Name string
	// Arguments is the raw params.arguments of a tools/call.
	Arguments []byte
	// Hidden is set when the caller may not use the called tool: the
	// transport then checks none of its Mcp-Param-* headers, as for an
	// unknown tool, so nothing tells the caller the tool exists.
	Hidden bool
}

// params holds every member of any request's params the server reads.
type params struct {
	Meta            *metaParams `json:"_meta"`
	Name            string      `json:"name"`
	URI             string      `json:"uri"`
	Arguments       jsonrpc.Raw `json:"arguments"`
	Cursor          *string     `json:"cursor"`
	Level           *string     `json:"level"`
	ProtocolVersion *string     `json:"protocolVersion"`
	Capabilities    jsonrpc.Raw `json:"capabilities"`
	ClientInfo      jsonrpc.Raw `json:"clientInfo"`
	RequestID       jsonrpc.Raw `json:"requestId"`
	Ref             *struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"ref"`
	Argument *struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Task           jsonrpc.Raw `json:"task"`
	TaskID         string      `json:"taskId"`
	Notifications  jsonrpc.Raw `json:"notifications"`
	InputResponses jsonrpc.Raw `json:"inputResponses"`
	RequestState   *string     `json:"requestState"`
}

type metaParams struct {
	ProgressToken      jsonrpc.Raw `json:"progressToken"`
	ProtocolVersion    jsonrpc.Raw `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities jsonrpc.Raw `json:"io.modelcontextprotocol/clientCapabilities"`
	ClientInfo         jsonrpc.Raw `json:"io.modelcontextprotocol/clientInfo"`
	LogLevel           jsonrpc.Raw `json:"io.modelcontextprotocol/logLevel"`
	// GuestState is the reserved key abi.MethodState (a struct tag cannot
	// name a constant; TestGuestStateTag checks the two agree).
	GuestState jsonrpc.Raw `json:"wasmcp/state"`
	// Traceparent and Tracestate are the W3C trace context the client
	// propagates in _meta (OpenTelemetry's MCP conventions).
	Traceparent string `json:"traceparent"`
	Tracestate  string `json:"tracestate"`
}

// request is the context of one request being served.
type request struct {
	ctx      context.Context
	srv      *Server
	cat      *Catalog
	msg      *Message
	p        params
	sess     *Session
	stream   Stream
	era      Era
	version  string
	caps     ClientCaps
	logLevel int
	token    []byte // progress token
	hint     Hint
	// inputs is the MRTR state of a modern tools/call, prompts/get or
	// resources/read; guestParams, when set, replace msg.Params for the
	// guest (a retry handing the guest its state).
	inputs      *inputRound
	guestParams []byte
}

// Methods by era.
var (
	legacyOnly = map[string]bool{
		"initialize": true, "ping": true, "logging/setLevel": true,
		"resources/subscribe": true, "resources/unsubscribe": true,
		"tasks/list": true, "tasks/result": true,
	}
	modernOnly = map[string]bool{"subscriptions/listen": true, "tasks/update": true}
	// needsStream are the methods that only mean something with a session
	// or a stream to the client (refused in simple mode).
	needsStream = map[string]bool{
		"logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true,
		"subscriptions/listen": true,
	}
)

// Handle serves one decoded message. sess is the legacy session the message
// belongs to (nil when there is none, e.g. a modern HTTP request); stream
// carries messages related to the request; it may be nil when the
// transport can send nothing but the response.
func (s *Server) Handle(ctx context.Context, sess *Session, msg *Message, stream Stream, hint Hint) Response {
	if msg.IsResponse() {
		if sess != nil {
			sess.Deliver(msg)
		}
		return Response{}
	}
	if !hint.LoadWaited && s.loading.Load() != nil {
		s.AwaitLoad(ctx, msg)
	}
	r := &request{ctx: ctx, srv: s, cat: s.cat.Load(), msg: msg, sess: sess, stream: stream, hint: hint}
	if sess != nil && msg.IsRequest() && !hint.idClaimed {
		release, ok := sess.claimID(msg.ID)
		if !ok {
			return r.fail(errorf(CodeInvalidRequest, "Invalid request: id "+string(msg.ID)+" is already used by a request of this session still being served"))
		}
		defer release()
	}
	if len(msg.Params) > 0 {
		if err := sonic.Unmarshal(msg.Params, &r.p); err != nil {
			return r.fail(errorf(CodeInvalidParams, "Invalid params: "+firstLine(err.Error())))
		}
		if k, got, want := paramNames(msg.Params); k != "" {
			// The host would read one and a guest perhaps the other.
			return r.fail(errorf(CodeInvalidParams, "Invalid params: member "+strconv.Quote(k)+" is given twice (names are matched without regard to case)"))
		} else if got != "" {
			// The host's decoder would read it as the spec's member, a
			// gateway matching names exactly would not.
			return r.fail(errorf(CodeInvalidParams, "Invalid params: member "+strconv.Quote(got)+" is not "+strconv.Quote(want)+" (JSON-RPC names are case-sensitive)"))
		}
	}
	if s.loadCut.Load() && itemMethods[msg.Method] && !msg.IsNotification() && !s.names(msg) {
		// What it names may have been among the modules still loading.
		return r.fail(errorf(CodeInternalError, "Server shutting down: the modules were still loading"))
	}
	if s.tracer != nil && !msg.IsNotification() {
		info := &TraceInfo{Method: msg.Method, ID: msg.ID}
		if sess != nil {
			info.SessionID = sess.ID
		}
		if msg.Method == "tools/call" {
			info.Tool = r.p.Name
		}
		if r.p.Meta != nil {
			info.Traceparent, info.Tracestate = r.p.Meta.Traceparent, r.p.Meta.Tracestate
		}
		var end func(Response)
		r.ctx, end = s.tracer.StartRequest(ctx, info)
		resp := r.serve()
		end(resp)
		return resp
	}
	return r.serve()
}

// serve serves a request whose params are decoded.
func (r *request) serve() Response {
	msg, hint := r.msg, r.hint
	modern := DeclaresModern(hint.Version) || (r.p.Meta != nil && len(r.p.Meta.ProtocolVersion) > 0)
	if msg.Method == "initialize" && !DeclaresModern(hint.Version) {
		modern = false
	}
	if modern {
		r.era = Modern
		if err := r.modernContext(); err != nil {
			return r.fail(err)
		}
	} else {
		r.era = Legacy
		r.legacyContext()
	}
	if msg.IsNotification() {
		r.notification()
		return Response{Era: r.era}
	}
	if (r.era == Modern && legacyOnly[msg.Method]) || (r.era == Legacy && modernOnly[msg.Method]) {
		return r.fail(errorf(CodeMethodNotFound, "Method not found: "+msg.Method))
	}
	if hint.Simple && needsStream[msg.Method] {
		return r.fail(errorf(CodeMethodNotFound, msg.Method+" is not available in simple mode: the server keeps no session or stream to the client"))
	}
	h, ok := handlers[msg.Method]
	if !ok {
		return r.fail(errorf(CodeMethodNotFound, "Method not found: "+msg.Method))
	}
	return h(r)
}

// legacyContext takes version, capabilities and log level from the session.
func (r *request) legacyContext() {
	r.logLevel = levelInfo
	if r.sess != nil {
		r.version, r.caps, r.logLevel = r.sess.state()
	}
	if r.version == "" {
		r.version = r.hint.Version
	}
	if r.p.Meta != nil {
		r.token = r.p.Meta.ProgressToken
	}
}

// modernContext validates a modern request's _meta in the order the
// 2026-07-28 revision and its conformance suite expect.
func (r *request) modernContext() *Error {
	m := r.p.Meta
	if m == nil {
		return errorf(CodeInvalidParams, "Missing required _meta field: "+MetaProtocolVersion)
	}
	var version string
	if len(m.ProtocolVersion) == 0 {
		return errorf(CodeInvalidParams, "Missing required _meta field: "+MetaProtocolVersion)
	}
	if err := sonic.Unmarshal(m.ProtocolVersion, &version); err != nil || version == "" {
		return errorf(CodeInvalidParams, "Invalid _meta field: "+MetaProtocolVersion)
	}
	if len(m.ClientCapabilities) == 0 {
		return errorf(CodeInvalidParams, "Missing required _meta field: "+MetaClientCapabilities)
	}
	if m.ClientCapabilities[0] != '{' {
		return errorf(CodeInvalidParams, "Invalid _meta field: "+MetaClientCapabilities)
	}
	caps, err := parseCaps(m.ClientCapabilities)
	if err != nil {
		return errorf(CodeInvalidParams, "Invalid _meta field: "+MetaClientCapabilities)
	}
	if len(m.ClientInfo) > 0 && m.ClientInfo[0] != '{' {
		return errorf(CodeInvalidParams, "Invalid _meta field: "+MetaClientInfo)
	}
	r.logLevel = levelNone
	if len(m.LogLevel) > 0 {
		var lv string
		_ = sonic.Unmarshal(m.LogLevel, &lv)
		l, ok := parseLevel(lv)
		if !ok {
			return errorf(CodeInvalidParams, "Invalid _meta field: "+MetaLogLevel)
		}
		r.logLevel = l
	}
	if r.hint.CheckHeaders != nil {
		if err := r.hint.CheckHeaders(r.info(version)); err != nil {
			return err
		}
	}
	if !IsModern(version) {
		return unsupportedVersion(version)
	}
	r.version, r.caps, r.token = version, caps, m.ProgressToken
	return nil
}

func (r *request) info(version string) RequestInfo {
	name := r.p.Name
	switch {
	case r.msg.Method == "resources/read":
		name = r.p.URI
	case r.p.TaskID != "":
		name = r.p.TaskID
	}
	info := RequestInfo{Method: r.msg.Method, ProtocolVersion: version, Name: name, Arguments: r.p.Arguments}
	if r.msg.Method == "tools/call" && r.srv.opts.Access != nil {
		if e, ok := r.cat.toolIdx[name]; ok {
			info.Hidden = !r.allowed(e.mod, ItemTool, name)
		}
	}
	return info
}

func supportedVersions() []string {
	return append(ModernVersions(), LegacyVersions()...)
}

func unsupportedVersion(requested string) *Error {
	data, _ := sonic.Marshal(map[string]any{"supported": supportedVersions(), "requested": requested})
	return &Error{Code: CodeUnsupportedVersion, Message: "Unsupported protocol version", Data: data}
}

// fail answers an error.
func (r *request) fail(e *Error) Response {
	if r.msg.IsNotification() {
		return Response{Era: r.era}
	}
	return Response{Body: ErrorResponse(r.msg.ID, e), Code: e.Code, Era: r.era}
}

// ok answers a result, decorated for the era: a modern result gets
// resultType and serverInfo (and the cache hints of c).
func (r *request) ok(result []byte, c cacheHint) Response {
	if r.era == Modern {
		result = r.srv.decorate(result, c)
	}
	return Response{Body: ResultResponse(r.msg.ID, result), Era: r.era}
}

// decoratedMembers are the members decorate sets, quoted.
var decoratedMembers = [][]byte{[]byte(`"resultType"`), []byte(`"_meta"`), []byte(`"ttlMs"`), []byte(`"cacheScope"`)}

// decorate adds resultType, _meta.serverInfo and, for cacheable results,
// ttlMs and cacheScope (c's) to a modern result, keeping members already
// set.
func (s *Server) decorate(result []byte, c cacheHint) []byte {
	cacheable := c != noCache
	result = bytes.TrimSpace(result)
	if len(result) < 2 || result[0] != '{' {
		return result
	}
	// The quick way prepends the members when the result may name none of
	// them (an escaped one would otherwise stand beside the host's).
	if !jsonrpc.MayHold(result, decoratedMembers...) {
		b := make([]byte, 0, len(result)+160)
		b = append(b, `{"resultType":"complete",`...)
		if cacheable {
			b = append(b, `"ttlMs":`...)
			b = strconv.AppendInt(b, s.opts.CacheTTL.Milliseconds(), 10)
			b = append(b, c.member()...)
		}
		b = append(b, s.metaInfo...)
		rest := bytes.TrimSpace(result[1:])
		if len(rest) > 0 && rest[0] != '}' {
			b = append(b, ',')
		}
		return append(b, rest...)
	}
	// Members are decoded as raw JSON and only _meta one level more, so
	// the guest's values go out as it wrote them (a large integer or a
	// float's spelling would not survive a round trip through any).
	var m map[string]json.RawMessage
	if err := sonic.Unmarshal(result, &m); err != nil {
		return result
	}
	if _, ok := m["resultType"]; !ok {
		m["resultType"] = json.RawMessage(`"complete"`)
	}
	if cacheable {
		if _, ok := m["ttlMs"]; !ok {
			m["ttlMs"] = strconv.AppendInt(nil, s.opts.CacheTTL.Milliseconds(), 10)
		}
		if _, ok := m["cacheScope"]; !ok {
			m["cacheScope"] = json.RawMessage(c.value())
		}
	}
	var meta map[string]json.RawMessage
	if raw, ok := m["_meta"]; ok {
		if sonic.Unmarshal(raw, &meta) != nil {
			return result
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	if _, ok := meta[MetaServerInfo]; !ok {
		meta[MetaServerInfo] = json.RawMessage(s.serverInfo)
	}
	mb, err := sonic.Marshal(meta)
	if err != nil {
		return result
	}
	m["_meta"] = mb
	out, err := sonic.Marshal(m)
	if err != nil {
		return result
	}
	return out
}

// notification handles a client notification.
func (r *request) notification() {
	switch r.msg.Method {
	case "notifications/cancelled":
		if r.sess != nil && len(r.p.RequestID) > 0 {
			r.sess.cancelRequest(r.p.RequestID)
		}
	case "notifications/initialized", "initialized", "notifications/roots/list_changed", "notifications/progress":
	default:
		r.srv.log.Debug("notification ignored", "method", r.msg.Method)
	}
}

// HandleBatch serves the elements of a JSON-RPC batch (from SplitBatch) in
// order and returns their answers as one JSON array, nil when there is
// none. initialize may not be part of a batch. Once ctx is done the
// elements not yet served are dropped. Which revisions allow
// batches is the transport's check (it knows the session's revision
// before splitting).
func (s *Server) HandleBatch(ctx context.Context, sess *Session, elems [][]byte, stream Stream, hint Hint) []byte {
	var out [][]byte
	for _, e := range elems {
		if ctx.Err() != nil {
			// The client went away or its session ended: the elements
			// not yet served are dropped.
			break
		}
		msg, id, perr := Decode(e)
		if perr != nil {
			out = append(out, ErrorResponse(id, perr))
			continue
		}
		if msg.IsRequest() && msg.Method == "initialize" {
			out = append(out, ErrorResponse(msg.ID, errorf(CodeInvalidRequest, "Invalid request: initialize must not be part of a batch")))
			continue
		}
		h := hint
		if sess != nil && msg.IsRequest() {
			// A batch's ids are in use until its answer is sent: two
			// alike in one batch would be two answers with one id.
			release, ok := sess.claimID(msg.ID)
			if !ok {
				out = append(out, ErrorResponse(msg.ID, errorf(CodeInvalidRequest, "Invalid request: id "+string(msg.ID)+" is already used by a request of this session still being served")))
				continue
			}
			defer release()
			h.idClaimed = true
		}
		if resp := s.Handle(ctx, sess, msg, stream, h); resp.Body != nil {
			out = append(out, resp.Body)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(append([]byte{'['}, bytes.Join(out, []byte{','})...), ']')
}
