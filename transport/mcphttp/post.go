package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/protocol"
)

// bodyChunk is the most a body buffer holds before bytes arrive to fill
// it: a declared Content-Length is a promise, not an allocation.
const bodyChunk = 16 << 10

// readBody reads a request body of at most MaxBody bytes as it arrives,
// within ReadTimeout. A batch (a JSON array) is counted as it arrives and
// refused as soon as it holds more than MaxBatch elements. On failure it
// has answered (413 for too large, 400 for a batch over the cap or a body
// that could not be read in time).
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	max := h.opts.MaxBody
	if r.ContentLength > max {
		h.refused.warn("body", "request refused: body larger than the cap", "content_length", r.ContentLength, "max_body", max)
		tooLarge(w, r, max)
		return nil, false
	}
	// Bound the time a client may take to send its body (net/http's own
	// ReadTimeout would also cut the long-lived streams).
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.ReadTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	// Read to EOF: only then does net/http watch the connection, so that
	// a client going away cancels the request's context. net/http ends the
	// body at its Content-Length and fails one that ends early.
	size := int64(512)
	if r.ContentLength > 0 {
		size = min(r.ContentLength+1, bodyChunk)
	}
	buf := make([]byte, 0, size)
	var count batchCounter
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		if count.feed(buf[len(buf):len(buf)+n]) > h.opts.MaxBatch {
			closeConn(w, r)
			h.batchTooLarge(w)
			return nil, false
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			h.refused.warn("body", "request refused: body larger than the cap", "max_body", max)
			tooLarge(w, r, max)
			return nil, false
		}
		if errors.Is(err, io.EOF) {
			return buf, true
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				h.refused.warn("body-slow", "request refused: body not received within the read timeout", "read_timeout", h.opts.ReadTimeout)
			}
			closeConn(w, r)
			writeError(w, http.StatusBadRequest, nil, protocol.CodeParseError, "Parse error: reading the request body: "+err.Error())
			return nil, false
		}
	}
}

// batchCounter counts the top-level elements of a JSON array fed to it in
// pieces: the commas outside strings at depth one. A body that does not
// start with '[' counts 0; invalid JSON is left to the decoder.
type batchCounter struct {
	started, array, inStr, esc bool
	depth, commas              int
}

// feed counts p and returns the elements seen so far (a lower bound until
// the array ends).
func (c *batchCounter) feed(p []byte) int {
	for _, b := range p {
		if !c.started {
			switch b {
			case ' ', '\t', '\r', '\n':
				continue
			}
			c.started, c.array = true, b == '['
		}
		if !c.array {
			return 0
		}
		switch {
		case c.inStr:
			switch {
			case c.esc:
				c.esc = false
			case b == '\\':
				c.esc = true
			case b == '"':
				c.inStr = false
			}
		case b == '"':
			c.inStr = true
		case b == '[' || b == '{':
			c.depth++
		case b == ']' || b == '}':
			c.depth--
		case b == ',' && c.depth == 1:
			c.commas++
		}
	}
	if !c.array {
		return 0
	}
	return c.commas + 1
}

// closeConn asks an HTTP/1.1 client to close the connection after this
// response. HTTP/2 and HTTP/3 forbid connection-specific headers (an HTTP/3
// client rejects the response), and their streams end alone.
func closeConn(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
	}
}

func tooLarge(w http.ResponseWriter, r *http.Request, max int64) {
	closeConn(w, r)
	writeError(w, http.StatusRequestEntityTooLarge, nil, protocol.CodeInvalidRequest,
		"Invalid request: the body is larger than "+strconv.FormatInt(max, 10)+" bytes")
}

// post serves a POST to /mcp.
func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	if protocol.IsBatch(body) {
		h.batch(w, r, body)
		return
	}
	msg, id, perr := protocol.Decode(body)
	if perr != nil {
		writeJSON(w, http.StatusBadRequest, protocol.ErrorResponse(id, perr))
		return
	}
	hv, herr := single(r.Header, hdrProtocolVersion)
	if herr != nil {
		writeJSON(w, http.StatusBadRequest, protocol.ErrorResponse(msg.ID, herr))
		return
	}
	sid := r.Header[hdrSessionID]
	switch {
	case h.opts.Mode == Simple:
		h.simple(w, r, msg, hv)
	case len(sid) == 0 && modernRoute(hv, msg):
		h.modern(w, r, msg, hv)
	default:
		var id string
		if len(sid) > 0 {
			id = sid[0]
		}
		h.legacy(w, r, msg, id, hv)
	}
}

// modernRoute decides the era of a POST without a session: modern when the
// MCP-Protocol-Version header names something other than a legacy revision,
// or when params carry _meta.
func modernRoute(hv string, msg *protocol.Message) bool {
	return protocol.DeclaresModern(hv) || hasMeta(msg.Params)
}

// hasMeta reports whether a params object has the member at path (by
// default _meta).
func hasMeta(params []byte, path ...any) bool {
	if len(params) == 0 || !bytes.Contains(params, []byte(`"_meta"`)) {
		return false
	}
	if len(path) == 0 {
		path = []any{"_meta"}
	}
	n, err := sonic.Get(params, path...)
	return err == nil && n.Exists()
}

// modernHint is the hint of a request routed to the 2026-07-28 era: the
// transport declares the modern revision, so protocol.Server.Handle
// validates _meta, then the headers (CheckHeaders compares the real
// MCP-Protocol-Version header with the body), then the revision.
func (h *Handler) modernHint(r *http.Request, s *respStream) protocol.Hint {
	return protocol.Hint{Version: protocol.LatestModern, CheckHeaders: s.check, Principal: h.principal(r)}
}

// modern serves a 2026-07-28 request: stateless, answered on this POST.
func (h *Handler) modern(w http.ResponseWriter, r *http.Request, msg *protocol.Message, hv string) {
	if hv == "" {
		writeJSON(w, http.StatusBadRequest, protocol.ErrorResponse(msg.ID, missing("MCP-Protocol-Version")))
		return
	}
	if msg.IsResponse() {
		writeError(w, http.StatusBadRequest, msg.ID, protocol.CodeInvalidRequest,
			"Invalid request: the 2026-07-28 revision has no requests to the client to respond to")
		return
	}
	s := h.newStream(w, r, nil)
	defer s.release()
	// A client that does not take SSE gets no stream: the server then sends
	// nothing before the answer (and refuses subscriptions/listen).
	var stream protocol.Stream
	if s.sse {
		stream = s
	}
	resp := h.srv.Handle(r.Context(), nil, msg, stream, h.modernHint(r, s))
	s.finish(resp, modernStatus(resp.Code))
}

// simple serves a POST in the POST-only JSON mode: no session, no stream.
func (h *Handler) simple(w http.ResponseWriter, r *http.Request, msg *protocol.Message, hv string) {
	if msg.IsResponse() {
		writeError(w, http.StatusBadRequest, msg.ID, protocol.CodeInvalidRequest,
			"Invalid request: this server sends no requests to the client")
		return
	}
	var hint protocol.Hint
	// Without sessions a legacy client's _meta (say, a progressToken) must
	// not make its request modern: here only the revision decides.
	modern := protocol.DeclaresModern(hv) || hasMeta(msg.Params, "_meta", protocol.MetaProtocolVersion)
	s := h.newStream(w, r, nil)
	defer s.release()
	s.json, s.sse = true, false
	if modern {
		if hv == "" {
			writeJSON(w, http.StatusBadRequest, protocol.ErrorResponse(msg.ID, missing("MCP-Protocol-Version")))
			return
		}
		hint = h.modernHint(r, s)
	} else {
		hint = protocol.Hint{Version: hv, Principal: h.principal(r)}
	}
	hint.Simple = true
	resp := h.srv.Handle(r.Context(), nil, msg, nil, hint)
	status := http.StatusOK
	if resp.Era == protocol.Modern {
		status = modernStatus(resp.Code)
	}
	s.finish(resp, status)
}

// legacy serves a request of the 2024-11-05 … 2025-11-25 revisions on
// Streamable HTTP.
func (h *Handler) legacy(w http.ResponseWriter, r *http.Request, msg *protocol.Message, sid, hv string) {
	if protocol.DeclaresModern(hv) {
		writeError(w, http.StatusBadRequest, msg.ID, protocol.CodeInvalidRequest,
			"Bad MCP-Protocol-Version: "+clip(hv)+"; a session speaks "+strings.Join(protocol.LegacyVersions(), ", "))
		return
	}
	principal := h.principal(r)
	hint := protocol.Hint{Version: hv, Principal: principal}
	if sid == "" {
		switch {
		case msg.IsRequest() && msg.Method == "initialize":
			h.initialize(w, r, msg, hint)
		case msg.IsRequest() && msg.Method == "server/discover":
			s := h.newStream(w, r, nil)
			defer s.release()
			s.finish(h.srv.Handle(r.Context(), nil, msg, nil, hint), http.StatusOK)
		default:
			writeError(w, http.StatusBadRequest, msg.ID, protocol.CodeInvalidRequest,
				"Bad Request: Mcp-Session-Id header is required (send initialize first)")
		}
		return
	}
	sess := h.lookup(sid, principal)
	if sess == nil {
		writeError(w, http.StatusNotFound, msg.ID, protocol.CodeInvalidRequest, "Session not found")
		return
	}
	sess.enter()
	defer sess.leave()
	switch {
	case msg.IsResponse():
		sess.ps.Deliver(msg)
		w.WriteHeader(http.StatusAccepted)
		return
	case msg.IsNotification():
		h.srv.Handle(r.Context(), sess.ps, msg, nil, hint)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s := h.newStream(w, r, sess)
	defer s.release()
	s.sid = sess.id
	// A disconnect is not a cancellation in this era: the call outlives the
	// request; notifications/cancelled, DELETE and expiry end it.
	resp := h.srv.Handle(context.WithoutCancel(r.Context()), sess.ps, msg, s, hint)
	if resp.Body == nil && h.shuttingDown() {
		resp.Body = stoppedBody(msg.ID)
		closeConn(s.w, r)
		s.finish(resp, http.StatusServiceUnavailable)
		return
	}
	s.finish(resp, http.StatusOK)
}

// initialize serves a legacy initialize without a session: it mints one,
// kept when the handshake succeeds.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, msg *protocol.Message, hint protocol.Hint) {
	ps := protocol.NewSession()
	ps.Principal = hint.Principal
	sess := h.newSession(ps, hint.Principal, false)
	s := h.newStream(w, r, sess)
	defer s.release()
	resp := h.srv.Handle(context.WithoutCancel(r.Context()), ps, msg, s, hint)
	if resp.Code == 0 && ps.Initialized() {
		if !h.register(sess) {
			sess.close()
			overCap(w, msg.ID, "Server overloaded: too many sessions; retry later")
			return
		}
		s.sid = sess.id
	} else {
		sess.close()
	}
	s.finish(resp, http.StatusOK)
}

// batch serves a JSON-RPC batch, which only sessions that negotiated
// 2024-11-05 or 2025-03-26 may send (and, in simple mode, requests whose
// MCP-Protocol-Version header names one of those).
func (h *Handler) batch(w http.ResponseWriter, r *http.Request, body []byte) {
	hv, _ := single(r.Header, hdrProtocolVersion)
	var sess *session
	var version string
	if h.opts.Mode == Simple {
		version = hv
	} else if sid := r.Header.Get(hdrSessionID); sid != "" {
		if sess = h.lookup(sid, h.principal(r)); sess == nil {
			writeError(w, http.StatusNotFound, nil, protocol.CodeInvalidRequest, "Session not found")
			return
		}
		version = sess.ps.Version()
	}
	if !protocol.BatchAllowed(version) {
		writeError(w, http.StatusBadRequest, nil, protocol.CodeInvalidRequest,
			"Invalid request: batches are only accepted on sessions that negotiated 2024-11-05 or 2025-03-26")
		return
	}
	elems, ok := h.splitBatch(w, body)
	if !ok {
		return
	}
	var ps *protocol.Session
	var stream protocol.Stream
	ctx := r.Context()
	if sess != nil {
		sess.enter()
		defer sess.leave()
		ps, stream = sess.ps, standalone{sess}
		// Not the legacy rule of one request (a disconnect is no
		// cancellation): a batch's elements are dropped, and the one
		// running canceled, when its client goes away or its session ends.
		var cancel context.CancelFunc
		ctx, cancel = sessionContext(ctx, sess)
		defer cancel()
	}
	hint := protocol.Hint{Version: hv, Principal: h.principal(r), Simple: h.opts.Mode == Simple}
	out := h.srv.HandleBatch(ctx, ps, elems, stream, hint)
	if out == nil && h.shuttingDown() && hasRequest(elems) {
		stopped(w, r, nil)
		return
	}
	if out == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if sess != nil {
		w.Header()[hdrSessionID] = []string{sess.id}
	}
	writeJSON(w, http.StatusOK, out)
}

// splitBatch splits a batch of at most MaxBatch elements. On failure it
// has answered 400.
func (h *Handler) splitBatch(w http.ResponseWriter, body []byte) ([][]byte, bool) {
	var count batchCounter
	if count.feed(body) > h.opts.MaxBatch {
		h.batchTooLarge(w)
		return nil, false
	}
	elems, perr := protocol.SplitBatch(body)
	if perr != nil {
		writeJSON(w, http.StatusBadRequest, protocol.ErrorResponse(nil, perr))
		return nil, false
	}
	return elems, true
}

func (h *Handler) batchTooLarge(w http.ResponseWriter) {
	h.refused.warn("batch", "batch refused: more elements than the cap", "max_batch", h.opts.MaxBatch)
	writeError(w, http.StatusBadRequest, nil, protocol.CodeInvalidRequest,
		"Invalid request: a batch may hold at most "+strconv.Itoa(h.opts.MaxBatch)+" messages")
}

// sessionContext is ctx, also canceled when the session ends. The end is
// followed with context.AfterFunc, which starts no goroutine unless the
// session does end first.
func sessionContext(ctx context.Context, sess *session) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(sess.ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// hasRequest reports whether a batch holds a request (a message that
// expects an answer).
func hasRequest(elems [][]byte) bool {
	for _, e := range elems {
		if m, _, err := protocol.Decode(e); err == nil && m.IsRequest() {
			return true
		}
	}
	return false
}

// shuttingDown reports whether Close has ended the sessions: the requests
// they still had in flight were stopped, not answered.
func (h *Handler) shuttingDown() bool {
	select {
	case <-h.closed:
		return true
	default:
		return false
	}
}

func stoppedBody(id []byte) []byte {
	return protocol.ErrorResponse(id, &protocol.Error{Code: protocol.CodeInternalError,
		Message: "Server shutting down: the request was stopped before it finished"})
}

// stopped answers a request that shutdown stopped before it had an
// answer: an error and the connection closed, never an acceptance.
func stopped(w http.ResponseWriter, r *http.Request, id []byte) {
	closeConn(w, r)
	writeJSON(w, http.StatusServiceUnavailable, stoppedBody(id))
}
