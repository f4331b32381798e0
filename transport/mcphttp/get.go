package mcphttp

import (
	"net/http"
	"time"

	"github.com/wasmcp/wasmcp/protocol"
)

// get serves GET /mcp: a legacy session's standalone SSE stream. Without a
// session (the 2026-07-28 era, or simple mode) it is 405.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	sess := h.sessionOf(w, r)
	if sess == nil {
		return
	}
	if _, sse := accepts(r); !sse {
		writeError(w, http.StatusNotAcceptable, nil, protocol.CodeInvalidRequest,
			"Not Acceptable: the GET stream is text/event-stream")
		return
	}
	if !h.acquireStream() {
		h.refused.warn("streams", "SSE stream refused: at the stream cap", "max_streams", h.opts.MaxStreams)
		overCap(w, nil, "Server overloaded: too many SSE streams; retry later")
		return
	}
	defer h.releaseStream()
	g := newGetStream()
	replay, done, ok := sess.attach(g, r.Header.Get(hdrLastEventID))
	if !ok {
		writeError(w, http.StatusNotFound, nil, protocol.CodeInvalidRequest, "Session not found")
		return
	}
	sess.enter()
	defer sess.leave()
	defer sess.detach(g)
	hd := w.Header()
	hd[hdrSessionID] = []string{sess.id}
	if done {
		g.kick() // the replay ends with the resumed stream's response
	}
	h.pump(w, r, g, replay, nil, true)
}

// pump writes a standalone stream until it is detached, the client goes
// away, shutdown begins or it has carried a resumed POST stream's response:
// the SSE headers, first (optional), the replayed events, then live events
// and keep-alive comments.
func (h *Handler) pump(w http.ResponseWriter, r *http.Request, g *getStream, replay []event, first []byte, ids bool) {
	hd := w.Header()
	hd["Content-Type"] = ctSSE
	hd["Cache-Control"] = noCache
	hd["X-Accel-Buffering"] = noBuffer
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	send := func(e event) bool {
		id := ""
		if ids {
			id = e.id()
		}
		_ = rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout))
		if writeEvent(w, id, e.data) != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if first != nil && !write(first) {
		return
	}
	for _, e := range replay {
		if !send(e) || e.last {
			return
		}
	}
	if first == nil && len(replay) == 0 && rc.Flush() != nil {
		return
	}
	t := time.NewTicker(h.opts.KeepAlive)
	defer t.Stop()
	for {
		select {
		case e := <-g.ch:
			if !send(e) || e.last {
				return
			}
		case <-t.C:
			if !write(keepAlive) {
				return
			}
		case <-g.done:
			return
		case <-r.Context().Done():
			return
		case <-h.closing:
			return
		}
	}
}

// delete serves DELETE /mcp: it ends a legacy session (204). Without a
// session it is 405.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	sess := h.sessionOf(w, r)
	if sess == nil {
		return
	}
	h.endSession(sess)
	w.WriteHeader(http.StatusNoContent)
}

// sessionOf finds the legacy session a GET or DELETE names, owned by the
// caller. Without one (the 2026-07-28 era, or simple mode) it answers 405,
// for an unknown or another principal's session 404, and returns nil.
func (h *Handler) sessionOf(w http.ResponseWriter, r *http.Request) *session {
	sid := r.Header.Get(hdrSessionID)
	if h.opts.Mode == Simple || sid == "" {
		h.notAllowed(w)
		return nil
	}
	sess := h.lookup(sid, h.principal(r))
	if sess == nil {
		writeError(w, http.StatusNotFound, nil, protocol.CodeInvalidRequest, "Session not found")
	}
	return sess
}
