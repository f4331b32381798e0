package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/protocol"
)

// errNoStream fails a message that has no stream to the client: the
// request's answer is plain JSON and the session has no GET stream.
var errNoStream = errors.New("no stream to the client: the response is plain JSON and no GET stream is open")

// event is one SSE event of a legacy session. Stream 0 is the session's
// standalone (GET) stream; POST streams are numbered from 1.
type event struct {
	stream, seq uint64
	data        []byte
	last        bool // the POST stream's response, its final event
}

// id is the event's SSE id, "<stream>-<seq>".
func (e event) id() string {
	b := make([]byte, 0, 24)
	b = strconv.AppendUint(b, e.stream, 10)
	b = append(b, '-')
	b = strconv.AppendUint(b, e.seq, 10)
	return string(b)
}

// parseEventID reads a Last-Event-ID written by event.id.
func parseEventID(s string) (stream, seq uint64, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		return 0, 0, false
	}
	st, err1 := strconv.ParseUint(a, 10, 64)
	sq, err2 := strconv.ParseUint(b, 10, 64)
	return st, sq, err1 == nil && err2 == nil
}

// ring is the bounded replay buffer of a session, oldest first.
type ring struct {
	buf            []event
	start, n       int
	bytes          int
	maxN, maxBytes int
}

func (r *ring) add(e event) {
	if r.buf == nil {
		r.buf = make([]event, r.maxN)
	}
	for r.n > 0 && (r.n == r.maxN || r.bytes+len(e.data) > r.maxBytes) {
		r.bytes -= len(r.buf[r.start].data)
		r.buf[r.start] = event{}
		r.start = (r.start + 1) % r.maxN
		r.n--
	}
	r.buf[(r.start+r.n)%r.maxN] = e
	r.n++
	r.bytes += len(e.data)
}

// after returns the buffered events of a stream after seq, oldest first.
func (r *ring) after(stream, seq uint64) []event {
	var out []event
	for i := 0; i < r.n; i++ {
		e := r.buf[(r.start+i)%r.maxN]
		if e.stream == stream && e.seq > seq {
			out = append(out, e)
		}
	}
	return out
}

// getStream is an attached standalone SSE stream: the session pushes events
// into ch and the GET handler writes them. A stream that falls behind is
// detached (done is closed); its client reconnects with Last-Event-ID.
type getStream struct {
	ch   chan event
	done chan struct{}
	once sync.Once
}

func newGetStream() *getStream {
	return &getStream{ch: make(chan event, 256), done: make(chan struct{})}
}

func (g *getStream) kick() { g.once.Do(func() { close(g.done) }) }

// session is a legacy-era session over HTTP.
type session struct {
	id        string
	ps        *protocol.Session
	principal string
	pair      bool // belongs to the 2024-11-05 SSE pair: events carry no id

	lastSeen atomic.Int64 // unix nanoseconds
	busy     atomic.Int32 // POSTs in flight and open GET streams
	remove   func()       // unregisters the list_changed listener

	mu         sync.Mutex
	ring       ring
	nextStream uint64
	seq0       uint64
	get        *getStream            // the standalone stream
	resumed    map[uint64]*getStream // GETs resuming a POST stream, by its number
	everGet    bool
	closed     bool
	ctx        context.Context    // ended by close: the requests of the session end with it
	end        context.CancelFunc // ends ctx
}

func (h *Handler) newSession(ps *protocol.Session, principal string, pair bool) *session {
	s := &session{id: ps.ID, ps: ps, principal: principal, pair: pair,
		ring: ring{maxN: h.opts.ReplayEvents, maxBytes: h.opts.ReplayBytes}}
	s.ctx, s.end = context.WithCancel(context.Background())
	s.touch()
	return s
}

// register makes the session known and subscribes it to list changes and
// resource updates. At the session cap (in total, or of its principal) it
// ends the idlest sessions with nothing in flight to make room; it reports
// false, registering nothing, when every session is busy.
func (h *Handler) register(s *session) bool {
	s.remove = h.srv.AddListener(&protocol.Listener{
		Session: s.ps, Tools: true, Prompts: true, Resources: true,
		Send: func(msg []byte) { _ = s.sendStandalone(msg) },
	})
	var evicted []*session
	h.mu.Lock()
	for {
		owner := h.byOwner[s.principal] >= h.opts.MaxSessionsPerPrincipal
		if !owner && len(h.sessions) < h.opts.MaxSessions {
			break
		}
		var v *session
		if owner {
			v = h.idlestLocked(true, s.principal)
		} else {
			v = h.fairVictimLocked(s.principal)
		}
		if v == nil {
			h.mu.Unlock()
			h.endAll(evicted)
			h.refused.warn("sessions-full", "session refused: every session is busy at the session cap",
				"max_sessions", h.opts.MaxSessions, "max_sessions_per_principal", h.opts.MaxSessionsPerPrincipal)
			return false
		}
		h.forgetLocked(v)
		evicted = append(evicted, v)
	}
	h.sessions[s.id] = s
	h.byOwner[s.principal]++
	startSweep := !h.sweeping
	h.sweeping = true
	h.mu.Unlock()
	if len(evicted) > 0 {
		h.refused.warn("sessions-evict", "session evicted: the idlest session made room at the session cap",
			"evicted", len(evicted), "max_sessions", h.opts.MaxSessions)
	}
	h.endAll(evicted)
	if startSweep {
		h.active.Add(1)
		go h.sweep()
	}
	return true
}

// idlestLocked is the session unused longest with nothing in flight (of
// principal only, when owner is set), nil when every one is busy.
func (h *Handler) idlestLocked(owner bool, principal string) *session {
	var best *session
	var bestSeen int64
	for _, v := range h.sessions {
		if v.busy.Load() != 0 || (owner && v.principal != principal) {
			continue
		}
		if seen := v.lastSeen.Load(); best == nil || seen < bestSeen {
			best, bestSeen = v, seen
		}
	}
	return best
}

// fairVictimLocked is the session a new session of principal ends at the
// total cap: an idle one of the principal holding the most sessions, the
// new one counted with its principal's (which wins a tie), so one
// principal's new sessions end another's only while that other holds
// as many (or more); among principals holding as many, the idlest
// session. Without authentication every client is the same principal and
// this is the idlest idle session. nil when no session may be ended: every
// one is busy, or the idle ones belong to principals holding fewer.
func (h *Handler) fairVictimLocked(principal string) *session {
	idlest := map[string]*session{}
	for _, v := range h.sessions {
		if v.busy.Load() != 0 {
			continue
		}
		if b := idlest[v.principal]; b == nil || v.lastSeen.Load() < b.lastSeen.Load() {
			idlest[v.principal] = v
		}
	}
	var best *session
	bestN := -1
	mine := h.byOwner[principal] + 1
	for p, v := range idlest {
		n := h.byOwner[p]
		if p == principal {
			n = mine
		} else if n < mine {
			continue // it holds fewer than principal would: not to be pushed out
		}
		switch {
		case n > bestN,
			n == bestN && p == principal,
			n == bestN && best.principal != principal && v.lastSeen.Load() < best.lastSeen.Load():
			best, bestN = v, n
		}
	}
	return best
}

// forgetLocked removes a session from the handler's tables.
func (h *Handler) forgetLocked(s *session) {
	if h.sessions[s.id] != s {
		return
	}
	delete(h.sessions, s.id)
	if h.byOwner[s.principal]--; h.byOwner[s.principal] <= 0 {
		delete(h.byOwner, s.principal)
	}
}

func (h *Handler) endAll(list []*session) {
	for _, s := range list {
		s.close()
	}
}

// lookup finds a session owned by principal.
func (h *Handler) lookup(id, principal string) *session {
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil || s.principal != principal {
		return nil
	}
	s.touch()
	return s
}

// endSession forgets a session and closes it: its calls are canceled, its
// pending requests to the client fail, its GET stream ends.
func (h *Handler) endSession(s *session) {
	h.mu.Lock()
	h.forgetLocked(s)
	h.mu.Unlock()
	s.close()
}

// acquireStream takes a place for a standalone SSE stream; false means
// the cap is reached.
func (h *Handler) acquireStream() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.getStreams >= h.opts.MaxStreams {
		return false
	}
	h.getStreams++
	return true
}

func (h *Handler) releaseStream() {
	h.mu.Lock()
	h.getStreams--
	h.mu.Unlock()
}

// overCap answers 503 with Retry-After to a request refused by a cap.
func overCap(w http.ResponseWriter, id []byte, msg string) {
	w.Header().Set("Retry-After", retryAfter)
	writeError(w, http.StatusServiceUnavailable, id, protocol.CodeInternalError, msg)
}

func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.end()
	if s.get != nil {
		s.get.kick()
		s.get = nil
	}
	for n, g := range s.resumed {
		g.kick()
		delete(s.resumed, n)
	}
	s.mu.Unlock()
	if s.remove != nil {
		s.remove()
	}
	s.ps.Close()
}

func (s *session) touch() { s.lastSeen.Store(time.Now().UnixNano()) }

// enter and leave bracket a POST or a GET stream; a busy session does not
// expire.
func (s *session) enter() { s.busy.Add(1); s.touch() }
func (s *session) leave() { s.busy.Add(-1); s.touch() }

// sweep ends sessions idle longer than SessionIdle until the handler
// closes.
func (h *Handler) sweep() {
	defer h.active.Done()
	every := min(max(h.opts.SessionIdle/4, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.closed:
			return
		case now := <-t.C:
			limit := now.Add(-h.opts.SessionIdle).UnixNano()
			var idle []*session
			h.mu.Lock()
			for _, s := range h.sessions {
				if s.busy.Load() == 0 && s.lastSeen.Load() < limit {
					idle = append(idle, s)
				}
			}
			h.mu.Unlock()
			for _, s := range idle {
				h.log.Debug("session expired", "session", s.id)
				h.endSession(s)
			}
		}
	}
}

// sendStandalone sends a message on the session's standalone stream. It is
// recorded for replay; it fails only when the session has never had a GET
// stream to deliver it on.
func (s *session) sendStandalone(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return protocol.ErrSessionClosed
	}
	s.seq0++
	e := event{stream: 0, seq: s.seq0, data: msg}
	if !s.pair {
		s.ring.add(e)
	}
	s.pushLocked(e)
	if !s.everGet {
		return errNoStream
	}
	return nil
}

// pushLocked hands an event of the standalone stream to the attached GET
// stream, detaching a stream that cannot keep up.
func (s *session) pushLocked(e event) {
	if s.get != nil && !offer(s.get, e) {
		s.get = nil
	}
}

// offer hands e to g; a stream that cannot keep up is kicked (its client
// resumes with Last-Event-ID) and offer reports false.
func offer(g *getStream, e event) bool {
	select {
	case g.ch <- e:
		return true
	default:
		g.kick()
		return false
	}
}

// newStream numbers a POST's SSE stream.
func (s *session) newStream() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextStream++
	return s.nextStream
}

// record keeps a POST stream's event for replay. When the POST's client is
// gone, the event goes to a GET that resumes that POST stream (and nowhere
// else: a message travels on one stream only, and a response goes on a GET
// stream only when it resumes the request's stream); with no such GET it
// waits in the replay buffer for one.
func (s *session) record(e event, orphan bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ring.add(e)
	if !orphan || s.closed {
		return
	}
	if g := s.resumed[e.stream]; g != nil && !offer(g, e) {
		delete(s.resumed, e.stream)
	}
}

// attach attaches the GET stream g and returns the events to replay first.
// A Last-Event-ID of a POST's stream makes g the resumption of that stream:
// it carries the stream's events after that id, ending with the response
// (done reports the response is among the replayed events, so g is not
// attached at all). Otherwise g becomes the session's standalone stream,
// replacing any other, and replays the standalone events after the id.
func (s *session) attach(g *getStream, lastEventID string) (replay []event, done, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, false
	}
	st, sq, parsed := parseEventID(lastEventID)
	if parsed {
		replay = s.ring.after(st, sq)
	}
	if parsed && st != 0 {
		if n := len(replay); n > 0 && replay[n-1].last {
			return replay, true, true
		}
		if old := s.resumed[st]; old != nil {
			old.kick()
		}
		if s.resumed == nil {
			s.resumed = make(map[uint64]*getStream)
		}
		s.resumed[st] = g
		return replay, false, true
	}
	if s.get != nil {
		s.get.kick()
	}
	s.get, s.everGet = g, true
	return replay, false, true
}

// detach drops g wherever it is still attached.
func (s *session) detach(g *getStream) {
	s.mu.Lock()
	if s.get == g {
		s.get = nil
	}
	for n, r := range s.resumed {
		if r == g {
			delete(s.resumed, n)
		}
	}
	s.mu.Unlock()
	g.kick()
}

// standalone is the protocol.Stream of a legacy request answered with
// plain JSON: its messages go on the session's GET stream.
type standalone struct{ s *session }

func (st standalone) Send(_ context.Context, msg []byte) error { return st.s.sendStandalone(msg) }
