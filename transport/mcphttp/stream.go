package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/protocol"
)

// Shared header values (never modified).
var (
	ctJSON    = []string{"application/json"}
	ctSSE     = []string{"text/event-stream"}
	noCache   = []string{"no-cache"}
	noBuffer  = []string{"no"}
	keepAlive = []byte(": keepalive\n\n")
)

var (
	errFinished    = errors.New("the request's response was already sent")
	errSSERefused  = errors.New("the client does not accept text/event-stream; message dropped")
	errStreamGone  = errors.New("the client closed the response stream")
	errWriteFailed = errors.New("writing to the client failed")
)

// accepts reads the Accept header: whether a JSON body and an SSE stream
// are acceptable. No Accept means anything; */* allows JSON but does not
// opt into SSE.
func accepts(r *http.Request) (json, sse bool) {
	a := r.Header["Accept"]
	if len(a) == 0 {
		return true, false
	}
	for _, v := range a {
		if strings.Contains(v, "text/event-stream") {
			sse = true
		}
		if strings.Contains(v, "application/json") || strings.Contains(v, "*/*") || strings.Contains(v, "application/*") {
			json = true
		}
	}
	if !json && !sse {
		json = true // be lenient: answer JSON to an Accept that allows neither
	}
	return json, sse
}

// respStream is one POST's response. It is the protocol.Stream of the
// request: the first message sent on it before the response switches the
// response to an SSE stream (when the client accepts one); the response
// itself is written by finish, as a JSON body or as the stream's last
// event.
type respStream struct {
	h      *Handler
	w      http.ResponseWriter
	reqCtx context.Context // done when the client goes away
	json   bool            // the client accepts application/json
	sse    bool            // the client accepts text/event-stream
	sess   *session        // legacy: the request's session
	sid    string          // Mcp-Session-Id to send, "" for none
	hdr    http.Header     // the request's headers, for checkHeaders
	check  func(protocol.RequestInfo) *protocol.Error

	mu       sync.Mutex
	started  bool // the SSE response has begun
	finished bool
	broken   bool // a write failed
	rc       *http.ResponseController
	ka       *time.Timer
	stream   uint64 // legacy: this stream's number in the session
	seq      uint64
}

var streamPool = sync.Pool{New: func() any {
	s := new(respStream)
	s.check = s.checkHeaders
	return s
}}

// newStream prepares the response of one POST.
func (h *Handler) newStream(w http.ResponseWriter, r *http.Request, sess *session) *respStream {
	s := streamPool.Get().(*respStream)
	s.h, s.w, s.reqCtx, s.sess, s.hdr = h, w, r.Context(), sess, r.Header
	s.json, s.sse = accepts(r)
	return s
}

// release returns the stream to the pool unless an SSE response started
// (a keep-alive callback may still hold it).
func (s *respStream) release() {
	if s.started {
		return
	}
	check := s.check
	*s = respStream{}
	s.check = check
	streamPool.Put(s)
}

func (s *respStream) checkHeaders(info protocol.RequestInfo) *protocol.Error {
	return checkHeaders(s.hdr, s.h.srv.Catalog(), info)
}

// Send implements protocol.Stream.
func (s *respStream) Send(_ context.Context, msg []byte) error {
	if s.sess != nil && !s.sse {
		// Legacy, JSON answer: the session's GET stream carries it.
		return s.sess.sendStandalone(msg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return errFinished
	}
	if !s.sse {
		return errSSERefused
	}
	if !s.started {
		s.startLocked()
	}
	return s.eventLocked(msg, false)
}

// startLocked writes the headers of the SSE response.
func (s *respStream) startLocked() {
	s.started = true
	h := s.w.Header()
	h["Content-Type"] = ctSSE
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = noBuffer
	if s.sid != "" {
		h[hdrSessionID] = []string{s.sid}
	}
	s.rc = http.NewResponseController(s.w)
	s.w.WriteHeader(http.StatusOK)
	if s.sess != nil {
		s.stream = s.sess.newStream()
		if s.sess.ps.Version() == protocol.V20251125 {
			// 2025-11-25: a first event with an id and no data lets the
			// client resume the stream from the start.
			s.writeLocked(event{stream: s.stream}.id(), nil)
		}
	}
	s.flushLocked()
	s.ka = time.AfterFunc(s.h.opts.KeepAlive, s.keepAlive)
}

// eventLocked sends one message as an SSE event; last marks the response.
// A legacy event is recorded for replay and, when the client is gone,
// handed to a GET that resumes this stream instead.
func (s *respStream) eventLocked(msg []byte, last bool) error {
	if s.sess == nil {
		if s.broken {
			return errStreamGone
		}
		return s.writeLocked("", msg)
	}
	s.seq++
	e := event{stream: s.stream, seq: s.seq, data: msg, last: last}
	orphan := s.broken || s.reqCtx.Err() != nil
	if !orphan {
		if s.writeLocked(e.id(), msg) != nil {
			orphan = true
		}
	}
	s.sess.record(e, orphan)
	return nil
}

// writeLocked writes and flushes one event; a failure marks the stream
// broken.
func (s *respStream) writeLocked(id string, data []byte) error {
	if s.broken {
		return errStreamGone
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.h.opts.WriteTimeout))
	if err := writeEvent(s.w, id, data); err != nil {
		s.broken = true
		return errWriteFailed
	}
	return s.flushLocked()
}

func (s *respStream) flushLocked() error {
	if err := s.rc.Flush(); err != nil {
		s.broken = true
		return errWriteFailed
	}
	return nil
}

// keepAlive writes a comment line on a quiet stream and re-arms itself.
func (s *respStream) keepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || s.broken {
		return
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.h.opts.WriteTimeout))
	if _, err := s.w.Write(keepAlive); err != nil {
		s.broken = true
		return
	}
	if s.flushLocked() == nil {
		s.ka.Reset(s.h.opts.KeepAlive)
	}
}

// finish writes the response: as the SSE stream's last event when the
// stream started, else as a JSON body with status (202 and no body when
// there is no response).
func (s *respStream) finish(resp protocol.Response, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	if s.ka != nil {
		s.ka.Stop()
	}
	if s.started {
		if resp.Body != nil {
			_ = s.eventLocked(resp.Body, true)
		}
		return
	}
	if resp.Body == nil {
		if s.sid != "" {
			s.w.Header()[hdrSessionID] = []string{s.sid}
		}
		s.w.WriteHeader(http.StatusAccepted)
		return
	}
	var scope *protocol.InsufficientScope
	if s.h.opts.StepUp != nil && errors.As(resp.Refusal, &scope) {
		if c := s.h.opts.StepUp(s.reqCtx, scope.Scopes); c != "" {
			// Step-up: the client learns which scope to ask for.
			s.w.Header().Set("WWW-Authenticate", c)
			if s.sid != "" {
				s.w.Header()[hdrSessionID] = []string{s.sid}
			}
			writeJSON(s.w, http.StatusForbidden, resp.Body)
			return
		}
	}
	if !s.json {
		// The client takes only SSE: one event carries the response.
		s.startLocked()
		s.ka.Stop()
		_ = s.eventLocked(resp.Body, true)
		return
	}
	if s.sid != "" {
		s.w.Header()[hdrSessionID] = []string{s.sid}
	}
	writeJSON(s.w, status, resp.Body)
}

// writeEvent writes one SSE event: an optional id line and the data, one
// data line per line of msg. Lines end at LF, CR or CRLF, as an SSE parser
// reads them, so no CR or LF ever reaches the wire inside a data line (a
// bare CR would end the line for a conforming parser and let the rest pose
// as an event:, id: or retry: field). In a JSON message CR and LF can only
// be whitespace, which the joining LF of the parser replaces.
func writeEvent(w io.Writer, id string, data []byte) error {
	var err error
	write := func(b []byte) {
		if err == nil {
			_, err = w.Write(b)
		}
	}
	if id != "" {
		write([]byte("id: " + id + "\n"))
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		line := data
		if i >= 0 {
			line = data[:i]
		}
		write(dataPrefix)
		write(line)
		write(newline)
		if i < 0 {
			break
		}
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	write(newline)
	return err
}

var (
	dataPrefix = []byte("data: ")
	newline    = []byte("\n")
)

// smallBody is a body net/http buffers whole before it writes the
// headers, and so gives a Content-Length itself (without allocating).
const smallBody = 2048

// writeJSON writes a JSON body.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = ctJSON
	if len(body) > smallBody {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError writes a JSON-RPC error response (id nil means null).
func writeError(w http.ResponseWriter, status int, id []byte, code int, msg string) {
	writeJSON(w, status, protocol.ErrorResponse(id, &protocol.Error{Code: code, Message: msg}))
}

// modernStatus is the HTTP status of a 2026-07-28 answer.
func modernStatus(code int) int {
	switch code {
	case protocol.CodeMethodNotFound:
		return http.StatusNotFound
	case protocol.CodeInvalidParams, protocol.CodeHeaderMismatch, abi.CodeMissingCapability,
		protocol.CodeUnsupportedVersion, protocol.CodeInvalidRequest, protocol.CodeParseError:
		return http.StatusBadRequest
	}
	return http.StatusOK
}
