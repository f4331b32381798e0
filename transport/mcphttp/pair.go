package mcphttp

import (
	"context"
	"net/http"
	"net/url"

	"github.com/wasmcp/wasmcp/protocol"
)

// The 2024-11-05 HTTP+SSE transport: GET /sse opens a session whose SSE
// stream carries every message from the server, starting with an endpoint
// event; the client POSTs its messages to /messages?sessionId=…, each
// answered 202, the answers arriving on the stream. The session ends with
// the stream.

// pairOpen serves GET /sse.
func (h *Handler) pairOpen(w http.ResponseWriter, r *http.Request) {
	if !h.acquireStream() {
		h.refused.warn("streams", "SSE stream refused: at the stream cap", "max_streams", h.opts.MaxStreams)
		overCap(w, nil, "Server overloaded: too many SSE streams; retry later")
		return
	}
	defer h.releaseStream()
	principal := h.principal(r)
	ps := protocol.NewSession()
	ps.Principal = principal
	sess := h.newSession(ps, principal, true)
	g := newGetStream()
	sess.attach(g, "")
	sess.enter()
	defer sess.leave()
	if !h.register(sess) {
		sess.close()
		overCap(w, nil, "Server overloaded: too many sessions; retry later")
		return
	}
	defer h.endSession(sess)
	endpoint := "event: endpoint\ndata: /messages?sessionId=" + url.QueryEscape(sess.id) + "\n\n"
	h.pump(w, r, g, nil, []byte(endpoint), false)
}

// pairPost serves POST /messages?sessionId=….
func (h *Handler) pairPost(w http.ResponseWriter, r *http.Request) {
	sid := r.URL.Query().Get("sessionId")
	if sid == "" {
		writeError(w, http.StatusBadRequest, nil, protocol.CodeInvalidRequest, "Bad Request: sessionId query parameter is required")
		return
	}
	sess := h.lookup(sid, h.principal(r))
	if sess == nil || !sess.pair {
		writeError(w, http.StatusNotFound, nil, protocol.CodeInvalidRequest, "Session not found")
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	var msg *protocol.Message
	var elems [][]byte
	if protocol.IsBatch(body) {
		if elems, ok = h.splitBatch(w, body); !ok {
			return
		}
	} else {
		var id []byte
		var perr *protocol.Error
		if msg, id, perr = protocol.Decode(body); perr != nil {
			writeJSON(w, http.StatusBadRequest, protocol.ErrorResponse(id, perr))
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
	// The answer goes on the stream; the call outlives this POST.
	ctx := context.WithoutCancel(r.Context())
	hint := protocol.Hint{Principal: sess.principal}
	stream := standalone{sess}
	sess.enter()
	h.active.Add(1)
	go func() {
		defer h.active.Done()
		defer sess.leave()
		var out []byte
		if msg != nil {
			out = h.srv.Handle(ctx, sess.ps, msg, stream, hint).Body
		} else {
			// The batch's elements are dropped when the session (its
			// stream) ends.
			bctx, cancel := sessionContext(ctx, sess)
			out = h.srv.HandleBatch(bctx, sess.ps, elems, stream, hint)
			cancel()
		}
		if out != nil {
			_ = sess.sendStandalone(out)
		}
	}()
}
