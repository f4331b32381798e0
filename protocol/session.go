package protocol

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/bytedance/sonic"
)

// Stream is where the server writes the messages related to one request —
// notifications and, in the legacy era, requests to the client — before
// the response. A transport provides it (stdout, an SSE stream).
type Stream interface {
	Send(ctx context.Context, msg []byte) error
}

// Session is the state of one legacy-era connection: a stdio process or an
// HTTP session. It is safe for concurrent use.
type Session struct {
	// ID is the session's id (the Mcp-Session-Id over HTTP).
	ID string

	mu          sync.Mutex
	initialized bool
	version     string
	caps        ClientCaps
	clientInfo  []byte
	logLevel    int
	logSet      bool // logging/setLevel was called: the client asked for logs
	subs        map[string]bool
	inflight    map[string]context.CancelCauseFunc
	ids         map[string]struct{} // the ids of the client's requests being served
	pending     map[string]chan *Message
	closed      bool
	inputEnded  bool // EndInput: no answer can arrive from the client
	// Principal owns the session (the authenticated caller, "" when none).
	Principal string
	// listensDone is closed by EndListens.
	listensDone chan struct{}
	endListens  sync.Once

	nextID atomic.Int64
}

// NewSession creates a session with a fresh crypto-random id.
func NewSession() *Session {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &Session{
		ID:       hex.EncodeToString(b[:]),
		logLevel: levelInfo,
		subs:     map[string]bool{},
		inflight: map[string]context.CancelCauseFunc{},
		ids:      map[string]struct{}{},
		pending:  map[string]chan *Message{},

		listensDone: make(chan struct{}),
	}
}

// EndListens ends the session's subscriptions/listen requests gracefully:
// each is answered with its completion result. A transport calls it when
// the client's input ends (end of file on stdio), since a listen, unlike
// other requests, would never finish by itself. Later listens on the
// session end right after their acknowledgement.
func (s *Session) EndListens() {
	s.endListens.Do(func() { close(s.listensDone) })
}

// ErrClientGone fails the requests to a client whose input ended.
var ErrClientGone = errors.New("the client is gone: its input ended")

// EndInput tells the session that the client's input ended (end of file on
// stdio): no answer can arrive any more, so its pending requests to the
// client (roots, elicitation, sampling) fail at once with ErrClientGone,
// as do later ones, and its subscriptions/listen requests end
// (EndListens). Other calls in flight continue.
func (s *Session) EndInput() {
	s.EndListens()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inputEnded = true
	for id, ch := range s.pending {
		close(ch)
		delete(s.pending, id)
	}
}

// Version is the negotiated revision, "" before initialize.
func (s *Session) Version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Initialized reports whether initialize has succeeded on the session.
func (s *Session) Initialized() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

func (s *Session) state() (string, ClientCaps, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, s.caps, s.logLevel
}

// Subscribed reports whether the session subscribed to uri.
func (s *Session) Subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[uri]
}

// ErrSessionClosed fails the requests a closed session still had open.
var ErrSessionClosed = errors.New("session closed")

// Close ends the session: its calls in flight are canceled and its pending
// requests to the client fail.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	for _, cancel := range s.inflight {
		cancel(ErrSessionClosed)
	}
	for id, ch := range s.pending {
		close(ch)
		delete(s.pending, id)
	}
}

// track registers a request in flight so notifications/cancelled can end
// it, keyed as the client matches ids (idKey: "a" and "\u0061" are one).
func (s *Session) track(id []byte, cancel context.CancelCauseFunc) (untrack func()) {
	key := idKey(id)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel(ErrSessionClosed)
		return func() {}
	}
	s.inflight[key] = cancel
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.inflight, key)
		s.mu.Unlock()
	}
}

// claimID marks the id of a client request as being served until
// release; ok is false when a request with the same id (as decoded: "a"
// and "\u0061" are one id) is being served already, whose answer the
// client could not tell from this one's.
func (s *Session) claimID(id []byte) (release func(), ok bool) {
	key := idKey(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.ids[key]; busy {
		return nil, false
	}
	s.ids[key] = struct{}{}
	return func() {
		s.mu.Lock()
		delete(s.ids, key)
		s.mu.Unlock()
	}, true
}

// idKey is a request id as the client matches answers: a string id
// decoded, an integer as its value.
func idKey(id []byte) string {
	switch {
	case len(id) >= 2 && id[0] == '"' && bytes.IndexByte(id, '\\') < 0:
		return "s" + string(id[1:len(id)-1])
	case len(id) >= 2 && id[0] == '"':
		var v string
		if sonic.Unmarshal(id, &v) == nil {
			return "s" + v
		}
	case string(id) == "-0":
		return "0"
	}
	return string(id)
}

// ErrCanceledByClient is the cause of a call the client canceled.
var ErrCanceledByClient = errors.New("canceled by the client")

// cancelRequest ends the request with the given id, if in flight,
// however the client spelled it (idKey).
func (s *Session) cancelRequest(id []byte) bool {
	key := idKey(id)
	s.mu.Lock()
	cancel, ok := s.inflight[key]
	s.mu.Unlock()
	if ok {
		cancel(ErrCanceledByClient)
	}
	return ok
}

// request sends a server-to-client request on stream and waits for the
// client's response, delivered through Deliver.
func (s *Session) request(ctx context.Context, stream Stream, method string, params []byte) (*Message, error) {
	id := []byte(`"wasmcp-` + strconv.FormatInt(s.nextID.Add(1), 10) + `"`)
	ch := make(chan *Message, 1)
	s.mu.Lock()
	if s.closed || s.inputEnded {
		err := s.endedErrLocked()
		s.mu.Unlock()
		return nil, err
	}
	s.pending[string(id)] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, string(id))
		s.mu.Unlock()
	}()
	if err := stream.Send(ctx, RequestMessage(id, method, params)); err != nil {
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			s.mu.Lock()
			defer s.mu.Unlock()
			return nil, s.endedErrLocked()
		}
		return m, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// endedErrLocked is why no answer will come: the session closed, or the
// client's input ended.
func (s *Session) endedErrLocked() error {
	if s.closed {
		return ErrSessionClosed
	}
	return ErrClientGone
}

// Deliver routes a client's response to the server-to-client request
// waiting for it. It reports whether one was waiting.
func (s *Session) Deliver(m *Message) bool {
	s.mu.Lock()
	ch, ok := s.pending[string(m.ID)]
	if ok {
		delete(s.pending, string(m.ID))
	}
	s.mu.Unlock()
	if ok {
		ch <- m
	}
	return ok
}
