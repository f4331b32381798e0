package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/tasks"
)

// taskError turns a failure to reserve or create a task into the error the
// client gets.
func taskError(err error) *Error {
	var le *tasks.LimitError
	if errors.As(err, &le) {
		return errorf(CodeInternalError, le.Error())
	}
	return errorf(CodeInternalError, "Cannot create the task: "+err.Error())
}

// runEscalating runs a modern tools/call inline for the window, then turns
// it into a task.
func (r *request) runEscalating(e *toolEntry) Response {
	m := r.srv.tasks
	owner := r.owner()
	slot, err := m.Reserve(owner)
	if err != nil {
		return r.fail(taskError(err))
	}
	gctx, gcancel := context.WithCancelCause(context.WithoutCancel(r.ctx))
	untrack := func() {}
	if r.sess != nil {
		untrack = r.sess.track(r.msg.ID, gcancel)
	}
	in := &inlineSink{r: r, mod: e.mod, done: make(chan outcome, 1)}
	d := r.detached(nil)
	rl := launch(gctx, d, e, in)

	inline := func(o outcome) Response {
		untrack()
		slot.Release()
		gcancel(nil)
		return r.toolAnswer(e, o.reply, o.err)
	}
	timer := time.NewTimer(r.srv.taskInline)
	defer timer.Stop()
	select {
	case o := <-in.done:
		return inline(o)
	case <-r.ctx.Done():
		// The client went away while the call was inline: it is canceled.
		gcancel(context.Cause(r.ctx))
		return inline(<-in.done)
	case <-timer.C:
	}
	rl.mu.Lock()
	select {
	case o := <-in.done:
		// The outcome arrived with the window's end: answer in place.
		rl.mu.Unlock()
		return inline(o)
	default:
	}
	rl.owner = nil // hold
	rl.mu.Unlock()
	untrack()

	t := &tasks.Task{ID: tasks.NewID(), Owner: owner, Era: contract.Modern, Version: r.version, Tool: e.tool.Name,
		Params: bytes.Clone(r.msg.Params), Caps: bytes.Clone(r.caps.Raw)}
	if r.inputs != nil {
		t.Answers = r.inputs.known()
	}
	if err := m.Create(context.WithoutCancel(r.ctx), t, slot, gcancel); err != nil {
		gcancel(err)
		rl.redirect(discard{})
		return r.fail(taskError(err))
	}
	rl.redirect(r.srv.newCollector(t, e, d))
	return r.ok(r.srv.encodeCreated(t, Modern), noCache)
}

// runAsTask runs a legacy task-augmented tools/call: the task is created
// first and the guest runs in the background. pre, when set, is the result
// the task completes with at once (arguments that do not match the schema).
func (r *request) runAsTask(e *toolEntry, pre []byte) Response {
	var hint struct {
		TTL *float64 `json:"ttl"`
	}
	if !isObject(r.p.Task) || sonic.Unmarshal(r.p.Task, &hint) != nil || (hint.TTL != nil && *hint.TTL < 0) {
		return r.fail(errorf(CodeInvalidParams, "Invalid params: task must be an object with an optional non-negative ttl"))
	}
	m := r.srv.tasks
	owner := r.owner()
	slot, err := m.Reserve(owner)
	if err != nil {
		return r.fail(taskError(err))
	}
	var ttl time.Duration
	if hint.TTL != nil {
		ttl = time.Duration(*hint.TTL * float64(time.Millisecond))
	}
	t := &tasks.Task{ID: tasks.NewID(), Owner: owner, Era: contract.Legacy, Version: r.version, Tool: e.tool.Name,
		TTL: m.TTL(ttl), Params: bytes.Clone(r.msg.Params), Caps: bytes.Clone(r.caps.Raw)}
	if r.sess != nil {
		t.Session = r.sess.ID
	}
	ctx := context.WithoutCancel(r.ctx)
	if pre != nil {
		if err := m.Create(ctx, t, slot, nil); err != nil {
			return r.fail(taskError(err))
		}
		if _, err := m.Finish(ctx, t.ID, tasks.Completed, "", pre, nil); err != nil {
			r.srv.log.Warn("finishing a task failed", "task", t.ID, "err", err)
		}
		return r.ok(r.srv.encodeCreated(t, Legacy), noCache)
	}
	gctx, gcancel := context.WithCancelCause(ctx)
	if err := m.Create(ctx, t, slot, gcancel); err != nil {
		gcancel(err)
		return r.fail(taskError(err))
	}
	d := r.detached(sessionStream{srv: r.srv, sess: r.sess})
	col := r.srv.newCollector(t, e, d)
	launch(gctx, d, e, col)
	return r.ok(r.srv.encodeCreated(t, Legacy), noCache)
}

// resume runs a modern task's guest again, from the start, with every
// answer the task has; it waits for input again or ends.
func (s *Server) resume(t *tasks.Task) {
	m := s.tasks
	ctx := context.Background()
	fail := func(msg string) {
		_, _ = m.Finish(ctx, t.ID, tasks.Failed, msg, nil, errorf(CodeInternalError, msg))
	}
	cat := s.cat.Load()
	e, ok := cat.toolIdx[t.Tool]
	if !ok {
		fail("Tool " + t.Tool + " is no longer served")
		return
	}
	msg := &Message{ID: []byte(`"` + t.ID + `"`), Method: "tools/call", Params: t.Params}
	r := &request{ctx: ctx, srv: s, cat: cat, msg: msg, era: Modern, version: t.Version,
		hint: Hint{Principal: t.Owner}, logLevel: levelNone}
	if err := sonic.Unmarshal(t.Params, &r.p); err != nil {
		fail("Cannot read the task's call: " + err.Error())
		return
	}
	caps, err := parseCaps(t.Caps)
	if err != nil {
		fail("Cannot read the task's client capabilities: " + err.Error())
		return
	}
	r.caps = caps
	r.inputs = &inputRound{retry: true, answers: maps.Clone(t.Answers), guest: t.GuestState}
	if r.inputs.answers == nil {
		r.inputs.answers = map[string]json.RawMessage{}
	}
	if len(t.GuestState) > 0 {
		p, err := withMeta(t.Params, abi.MethodState, t.GuestState)
		if err != nil {
			fail("Cannot hand the guest its state: " + err.Error())
			return
		}
		r.guestParams = p
	}
	gctx, gcancel := context.WithCancelCause(ctx)
	if !m.Attach(t.ID, gcancel) {
		gcancel(nil)
		return
	}
	col := s.newCollector(t, e, r)
	launch(gctx, r, e, col)
}

// detached is a copy of the request for work that outlives it: a context
// without the request's cancellation and, instead of the request's stream,
// stream (nil for none).
func (r *request) detached(stream Stream) *request {
	d := *r
	d.ctx = context.WithoutCancel(r.ctx)
	d.stream = stream
	// What the guest and its requests read after the request ended does
	// not alias the transport's buffers.
	d.msg = &Message{ID: bytes.Clone(r.msg.ID), Method: r.msg.Method, Params: bytes.Clone(r.msg.Params)}
	d.guestParams = bytes.Clone(r.guestParams)
	d.caps.Raw = bytes.Clone(r.caps.Raw)
	d.token = bytes.Clone(r.token)
	return &d
}

// sessionStream sends a legacy task's messages on its session's standalone
// channel (the stdio pipe, the HTTP GET stream).
type sessionStream struct {
	srv  *Server
	sess *Session
}

func (s sessionStream) Send(_ context.Context, msg []byte) error {
	if s.sess == nil || !s.srv.sendToSession(s.sess, msg) {
		return errNoSessionStream
	}
	return nil
}

var errNoSessionStream = errors.New("the session has no stream for messages unrelated to a request")

// sendToSession delivers a message on a legacy session's standalone
// channel; false when the session has none.
func (s *Server) sendToSession(sess *Session, msg []byte) bool {
	s.mu.Lock()
	var l *Listener
	for x := range s.listeners {
		if x.Session == sess {
			l = x
			break
		}
	}
	s.mu.Unlock()
	if l == nil {
		return false
	}
	l.Send(msg)
	return true
}
