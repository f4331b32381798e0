package mcphttp

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/protocol"
)

// Mode selects what the /mcp endpoint speaks.
type Mode int

const (
	// Streamable is Streamable HTTP in both eras: legacy sessions with SSE,
	// GET streams and DELETE, and modern stateless requests.
	Streamable Mode = iota
	// Simple answers every POST with one JSON body: no sessions, no SSE, no
	// requests to the client; GET and DELETE answer 405.
	Simple
)

// Options configure a Handler and Serve. Zero values take the defaults
// named on each field.
type Options struct {
	// Mode is Streamable (the default) or Simple.
	Mode Mode
	// LegacySSE serves the 2024-11-05 HTTP+SSE pair: GET /sse and
	// POST /messages?sessionId=….
	LegacySSE bool
	// Addr is the address the server listens on. When its host is a
	// loopback address (or localhost), the Host allow-list defaults to the
	// loopback names (DNS-rebinding protection).
	Addr string
	// AllowedOrigins lists the Origins browsers may call from: "scheme://host"
	// (any port) or "scheme://host:port"; "*" allows any; "null" must be
	// listed to be allowed. Empty means no browser origin but the server's
	// own (same scheme, host and port as the request, when the Host
	// allow-list is on): a web page elsewhere, even on another localhost
	// port, cannot drive the server unless its origin is listed. A request
	// without Origin (not from a browser) is always allowed.
	AllowedOrigins []string
	// AllowedHosts lists the Host header values served: "name" (any port)
	// or "name:port"; "*" allows any. Empty means localhost, 127.0.0.1 and
	// [::1] with the bound port on a loopback bind, and any Host otherwise.
	AllowedHosts []string
	// MaxBody caps a request body; larger ones get 413. The body is read
	// as it arrives, never allocated from its declared Content-Length.
	// 0 means DefaultMaxBody.
	MaxBody int64
	// ReadTimeout bounds the reading of one request body (the headers have
	// ReadHeaderTimeout); a client slower than that gets 400. 0 means
	// DefaultReadTimeout.
	ReadTimeout time.Duration
	// ReadHeaderTimeout bounds the reading of a request's headers (Serve
	// only). 0 means DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for this
	// long (Serve only). 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's header block, HTTP/1.1 and HTTP/2
	// and HTTP/3 (Serve only); larger ones get 431. 0 means DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxConns caps the connections open at once (Serve only): past it a
	// new connection is closed as soon as accepted. 0 means
	// DefaultMaxConns(), sized from the file-descriptor limit.
	MaxConns int
	// MaxConnsPerAddr caps the connections open at once from one remote IP
	// address (Serve only). 0 means DefaultMaxConnsPerAddr (and never more
	// than MaxConns). Behind a reverse proxy every connection comes from
	// the proxy: raise it to MaxConns.
	MaxConnsPerAddr int
	// MaxConcurrentStreams caps the requests in flight on one HTTP/2
	// connection (HTTP/1.1 serves one at a time). 0 means
	// DefaultMaxConcurrentStreams.
	MaxConcurrentStreams int
	// MaxSessions caps the legacy sessions kept at once. A new session
	// over the cap ends a session with no request in flight and no open
	// stream: the idlest one of the principal holding the most sessions
	// (the new session counted with its own principal, which wins a tie),
	// never one of a principal holding fewer than the new session's would,
	// so one principal cannot push another's sessions out; when no session
	// may be ended, initialize gets 503 with Retry-After. Without
	// Principal every client is one principal: the idlest session ends.
	// 0 means DefaultMaxSessions.
	MaxSessions int
	// StepUp, when set, is the WWW-Authenticate value of a request
	// refused for a scope its credential lacks (a Response.Refusal of
	// *protocol.InsufficientScope; scopes are those that would allow it),
	// "" when the request's authentication has none: such a request is
	// answered 403 with that challenge and the JSON-RPC error as its body
	// (MCP step-up authorization). Without it, or when it answers "", the
	// JSON-RPC error goes as any other. auth.StepUpChallenge fits.
	StepUp func(ctx context.Context, scopes []string) string
	// MaxSessionsPerPrincipal caps the sessions of one principal (see
	// Principal) the same way. 0 means MaxSessions.
	MaxSessionsPerPrincipal int
	// MaxStreams caps the standalone SSE streams (GET /mcp, GET /sse) open
	// at once; past it a GET gets 503 with Retry-After. A session has at
	// most one GET stream (a new one replaces the old). 0 means
	// DefaultMaxStreams.
	MaxStreams int
	// MaxBatch caps the elements of one JSON-RPC batch; larger batches get
	// 400 (-32600). 0 means DefaultMaxBatch.
	MaxBatch int
	// SessionIdle ends a legacy session unused for this long. 0 means 30 min.
	SessionIdle time.Duration
	// KeepAlive is the interval of SSE comment lines on quiet streams. 0
	// means 15 s.
	KeepAlive time.Duration
	// ReplayEvents bounds the per-session buffer of SSE events kept for
	// Last-Event-ID. 0 means 256.
	ReplayEvents int
	// ReplayBytes bounds the same buffer in bytes. 0 means 8 MiB.
	ReplayBytes int
	// WriteTimeout bounds the write of one SSE event to a client that does
	// not read. 0 means 30 s.
	WriteTimeout time.Duration
	// TLSCert and TLSKey, both set, make Serve speak HTTPS (HTTP/1.1 and
	// HTTP/2 by ALPN); otherwise it speaks HTTP/1.1 and h2c.
	TLSCert, TLSKey string
	// HTTP3 makes Serve speak HTTP/3 too, on UDP (needs TLSCert and
	// TLSKey); HTTP3MaxStreams caps the concurrent requests of one QUIC
	// connection (0 means DefaultHTTP3MaxStreams). See http3.go.
	HTTP3           bool
	HTTP3MaxStreams int
	// ShutdownGrace is how long Serve lets requests in flight finish once
	// its context is done, before it ends every session and stops their
	// guests. 0 means 10 s.
	ShutdownGrace time.Duration
	// Principal names the authenticated caller of a request; sessions
	// belong to the principal that opened them. Nil means everyone is "".
	Principal func(*http.Request) string
	// Middleware, when set, wraps the handler Serve serves (an
	// authentication guard that puts the principal in the request's
	// context for Principal to read).
	Middleware func(http.Handler) http.Handler
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// ExtraRoutes are more handlers served beside /mcp (e.g. /metrics,
	// /healthz), by exact path, behind the same Host and Origin checks.
	// They cannot replace /mcp, /sse or /messages.
	ExtraRoutes map[string]http.Handler
	// Wrap, when set, wraps the handler Serve serves (e.g. to extract a
	// trace context from the headers into the request's context).
	Wrap func(http.Handler) http.Handler
	// Started, when set, is called by Serve with its Handler once the
	// listener accepts connections.
	Started func(*Handler)
	// Draining, when set, is called by Serve as its graceful shutdown
	// begins, DrainDelay before it stops accepting connections: a readiness
	// probe reports not ready from then on.
	Draining func()
	// DrainDelay is how long Serve keeps accepting and serving after
	// Draining, so that load balancers notice the failing readiness probe
	// first (Serve only). 0 means none.
	DrainDelay time.Duration
}

func (o *Options) defaults() {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns()
	}
	if o.MaxConnsPerAddr <= 0 {
		o.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	o.MaxConnsPerAddr = min(o.MaxConnsPerAddr, o.MaxConns)
	if o.MaxConcurrentStreams <= 0 {
		o.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessionsPerPrincipal <= 0 || o.MaxSessionsPerPrincipal > o.MaxSessions {
		o.MaxSessionsPerPrincipal = o.MaxSessions
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = 30 * time.Minute
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.ReplayEvents <= 0 {
		o.ReplayEvents = 256
	}
	if o.ReplayBytes <= 0 {
		o.ReplayBytes = 8 << 20
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Handler is the HTTP handler of an MCP server. It is safe for concurrent
// use. Close it to end its sessions.
type Handler struct {
	srv     *protocol.Server
	opts    Options
	log     *slog.Logger
	origins originPolicy
	hosts   hostPolicy
	refused *rateLog // refusals over a limit, at warning level, rate-limited

	mu         sync.Mutex
	sessions   map[string]*session
	byOwner    map[string]int // sessions per principal
	sweeping   bool
	getStreams int // standalone SSE streams open

	closingCtx context.Context // done when shutdown begins
	closing    <-chan struct{} // closingCtx.Done()
	beginClose context.CancelFunc
	closed     chan struct{} // closed by Close
	endOnce    sync.Once
	active     activity // requests in ServeHTTP and background work
}

// New creates the handler serving srv.
func New(srv *protocol.Server, opts Options) *Handler {
	opts.defaults()
	h := &Handler{
		srv:      srv,
		opts:     opts,
		log:      opts.Logger,
		sessions: map[string]*session{},
		byOwner:  map[string]int{},
		closed:   make(chan struct{}),
		refused:  newRateLog(opts.Logger, time.Second),
	}
	h.closingCtx, h.beginClose = context.WithCancel(context.Background())
	h.closing = h.closingCtx.Done()
	h.origins = newOriginPolicy(opts.AllowedOrigins)
	h.hosts = newHostPolicy(opts.AllowedHosts, opts.Addr)
	return h
}

// BeginShutdown ends the streams that never end by themselves (GET
// streams, the 2024-11-05 SSE pair; subscriptions/listen streams are
// answered with their completion result) so that a graceful shutdown can
// complete; requests in flight continue.
func (h *Handler) BeginShutdown() {
	h.beginClose()
	h.srv.CloseSubscriptions()
}

// Close ends every session — their calls in flight are canceled and their
// guests stopped, their pending requests to the client fail — and stops
// the idle sweeper. Requests already being served finish on their own.
func (h *Handler) Close() {
	h.BeginShutdown()
	h.endOnce.Do(func() { close(h.closed) })
	h.mu.Lock()
	all := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		all = append(all, s)
	}
	h.mu.Unlock()
	for _, s := range all {
		h.endSession(s)
	}
}

// wait waits up to d for the requests and background work in flight.
func (h *Handler) wait(d time.Duration) bool {
	select {
	case <-h.active.idle():
		return true
	case <-time.After(d):
		return false
	}
}

// activity counts requests and background work. Unlike a sync.WaitGroup,
// work may start while another goroutine waits for the count to reach
// zero (a request arriving during shutdown).
type activity struct {
	mu   sync.Mutex
	n    int
	done chan struct{} // closed while n is 0; nil means closed
}

// Add adds d (positive or negative) to the count.
func (a *activity) Add(d int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 && d > 0 {
		a.done = make(chan struct{})
	}
	a.n += d
	if a.n < 0 {
		panic("mcphttp: activity count below zero")
	}
	if a.n == 0 && a.done != nil {
		close(a.done)
		a.done = nil
	}
}

// Done ends one piece of work.
func (a *activity) Done() { a.Add(-1) }

// idle is closed once the count is zero.
func (a *activity) idle() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done == nil {
		return closedChan
	}
	return a.done
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Routes are the paths the handler serves: /mcp, /sse and /messages
// when the 2024-11-05 HTTP+SSE pair is on, then Options.ExtraRoutes in
// order. An embedder that mounts the
// handler on its own mux registers each of them (ServeHTTP answers 404 for
// any other path).
func (h *Handler) Routes() []string {
	routes := []string{"/mcp"}
	if h.opts.LegacySSE && h.opts.Mode != Simple {
		routes = append(routes, "/sse", "/messages")
	}
	extra := make([]string, 0, len(h.opts.ExtraRoutes))
	for p := range h.opts.ExtraRoutes {
		if !slices.Contains(routes, p) {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	return append(routes, extra...)
}

// ServeHTTP routes a request: the Host and Origin checks, then /mcp (and,
// when enabled, /sse and /messages).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.active.Add(1)
	defer h.active.Done()
	if !h.hosts.allow(r.Host) {
		writeError(w, http.StatusForbidden, nil, protocol.CodeInvalidRequest, "Forbidden: Host header "+clip(r.Host)+" is not allowed")
		return
	}
	if o, ok := r.Header["Origin"]; ok {
		if len(o) != 1 || !(h.origins.allow(o[0]) || h.hosts.sameOrigin(r, o[0])) {
			writeError(w, http.StatusForbidden, nil, protocol.CodeInvalidRequest, "Forbidden: Origin is not allowed")
			return
		}
		cors(w, r, o[0])
		if r.Method == http.MethodOptions {
			preflight(w, r)
			return
		}
	}
	switch r.URL.Path {
	case "/mcp":
		switch r.Method {
		case http.MethodPost:
			h.post(w, r)
		case http.MethodGet:
			h.get(w, r)
		case http.MethodDelete:
			h.delete(w, r)
		case http.MethodOptions:
			w.Header().Set("Allow", h.allow())
			w.WriteHeader(http.StatusNoContent)
		default:
			h.notAllowed(w)
		}
	case "/sse":
		if !h.opts.LegacySSE || h.opts.Mode == Simple {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeError(w, http.StatusMethodNotAllowed, nil, protocol.CodeInvalidRequest, "Method not allowed")
			return
		}
		h.pairOpen(w, r)
	case "/messages":
		if !h.opts.LegacySSE || h.opts.Mode == Simple {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, nil, protocol.CodeInvalidRequest, "Method not allowed")
			return
		}
		h.pairPost(w, r)
	default:
		if rt, ok := h.opts.ExtraRoutes[r.URL.Path]; ok {
			rt.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

// Stats are a Handler's gauges.
type Stats struct {
	// Sessions is the number of legacy sessions open.
	Sessions int
	// Streams is the number of standalone SSE streams open.
	Streams int
}

// Stats returns the handler's gauges now.
func (h *Handler) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Stats{Sessions: len(h.sessions), Streams: h.getStreams}
}

func (h *Handler) allow() string {
	if h.opts.Mode == Simple {
		return "POST, OPTIONS"
	}
	return "POST, GET, DELETE, OPTIONS"
}

func (h *Handler) notAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", h.allow())
	writeError(w, http.StatusMethodNotAllowed, nil, protocol.CodeInvalidRequest, "Method not allowed")
}

func (h *Handler) principal(r *http.Request) string {
	if h.opts.Principal == nil {
		return ""
	}
	return h.opts.Principal(r)
}
