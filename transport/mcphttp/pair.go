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
	principal := h.principal(r)
	ps := protocol.NewSession()
	ps.Principal = principal
	sess := h.newSession(ps, principal, true)
	g := newGetStream()
	sess.attach(g, "")
	h.register(sess)
	sess.enter()
	defer h.endSession(sess)
	defer sess.leave()
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
		var perr *protocol.Error
		if elems, perr = protocol.SplitBatch(body); perr != nil {
			writeJSON(w, http.StatusBadRequest, protocol.ErrorResponse(nil, perr))
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
			out = h.srv.HandleBatch(ctx, sess.ps, elems, stream, hint)
		}
		if out != nil {
			_ = sess.sendStandalone(out)
		}
	}()
}
