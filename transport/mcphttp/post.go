package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/protocol"
)

// bodyTimeout bounds the reading of a request body.
const bodyTimeout = 30 * time.Second

// readBody reads a request body of at most MaxBody bytes. On failure it has
// answered (413 for too large, 400 for a body that could not be read).
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	max := h.opts.MaxBody
	if r.ContentLength > max {
		tooLarge(w, max)
		return nil, false
	}
	// Bound the time a client may take to send its body (net/http's own
	// ReadTimeout would also cut the long-lived streams).
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	var body []byte
	var err error
	if r.ContentLength >= 0 {
		// Read to EOF (one byte past the declared length): only then does
		// net/http watch the connection, so that a client going away
		// cancels the request's context.
		body = make([]byte, r.ContentLength+1)
		var n int
		n, err = io.ReadFull(r.Body, body)
		switch {
		case err == nil:
			err = errors.New("body longer than its Content-Length")
		case errors.Is(err, io.ErrUnexpectedEOF) && int64(n) == r.ContentLength, errors.Is(err, io.EOF) && n == 0 && r.ContentLength == 0:
			err = nil
		}
		body = body[:n]
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, max+1))
		if err == nil && int64(len(body)) > max {
			tooLarge(w, max)
			return nil, false
		}
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, nil, protocol.CodeParseError, "Parse error: reading the request body: "+err.Error())
		return nil, false
	}
	return body, true
}

func tooLarge(w http.ResponseWriter, max int64) {
	w.Header().Set("Connection", "close")
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
		h.register(sess)
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
	elems, perr := protocol.SplitBatch(body)
	if perr != nil {
		writeJSON(w, http.StatusBadRequest, protocol.ErrorResponse(nil, perr))
		return
	}
	var ps *protocol.Session
	var stream protocol.Stream
	ctx := r.Context()
	if sess != nil {
		sess.enter()
		defer sess.leave()
		ps, stream = sess.ps, standalone{sess}
		ctx = context.WithoutCancel(ctx)
	}
	hint := protocol.Hint{Version: hv, Principal: h.principal(r)}
	out := h.srv.HandleBatch(ctx, ps, elems, stream, hint)
	if out == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if sess != nil {
		w.Header()[hdrSessionID] = []string{sess.id}
	}
	writeJSON(w, http.StatusOK, out)
}
