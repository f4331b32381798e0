package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/tasks"
)

// How a tools/call runs, tasks and the relay.
//
// A tools/call runs in one of three modes, decided by toolMode — the one
// rule for every transport:
//
//	task support         client declared tasks   era      mode
//	forbidden            any                     any      inline
//	optional             no                      any      inline
//	required             no                      any      refused (-32021 modern, -32601 legacy)
//	optional, required   yes                     legacy   task: created first, answered at once
//	optional, required   yes                     modern   escalate: inline for TaskInline, then task
//
// "Declared" is params.task on a 2025-11-25 session, and the tasks
// extension in the request's clientCapabilities in the modern era.
//
// Inline calls run on the request's goroutine as before. The other two run
// the guest on its own goroutine with a relay as its host.Peer: the relay
// hands every notification and the outcome of the guest to its owner — the
// request while it waits inline, the task's collector afterwards. At the end
// of the inline window the request takes the relay's lock: an outcome that
// arrived is answered in place; otherwise the relay holds what the guest
// sends, the task is created (before the answer is written, so tasks/get
// resolves at once), and the relay replays what it held to the collector and
// forwards to it from then on. Deliveries happen under the relay's lock, so
// no message reaches the request after it stopped owning the guest, none is
// lost and none is delivered twice. The guest's context is detached from
// the request's: after the hand-off only tasks/cancel, the task's expiry or
// the server's shutdown (through the tasks.Manager) stop it.

// callMode is how a tools/call runs.
type callMode uint8

const (
	modeInline   callMode = iota // run to completion, answer in place
	modeTask                     // legacy: create the task first, answer with it
	modeEscalate                 // modern: inline for the window, then a task
)

// DefaultTaskInline is how long a modern call that may become a task runs
// inline before it does.
const DefaultTaskInline = 100 * time.Millisecond

// toolMode is the rule deciding how a tools/call of e runs (see the table
// above), or the error refusing it.
func (r *request) toolMode(e *toolEntry) (callMode, *Error) {
	support := e.tool.TaskSupport()
	if r.era == Modern {
		switch {
		case support == abi.TaskForbidden:
			return modeInline, nil
		case !r.caps.Tasks && support == abi.TaskRequired:
			return 0, r.missingTasks()
		case !r.caps.Tasks:
			return modeInline, nil
		}
		return modeEscalate, nil
	}
	requested := len(r.p.Task) > 0 && string(r.p.Task) != "null" && atLeast(r.version, V20251125)
	switch {
	case requested && support == abi.TaskForbidden:
		return 0, errorf(CodeMethodNotFound, "Tool "+r.p.Name+" does not support task-augmented calls")
	case requested:
		return modeTask, nil
	case support == abi.TaskRequired:
		return 0, r.missingTasks()
	}
	return modeInline, nil
}

// owner is the principal a task of the request belongs to.
func (r *request) owner() string {
	if r.hint.Principal == "" && r.sess != nil {
		return r.sess.Principal
	}
	return r.hint.Principal
}

// outcome is how a guest call ended.
type outcome struct {
	reply *host.Reply
	err   error
}

// sink is an owner of a guest call: it gets the guest's notifications and
// its outcome.
type sink interface {
	notify(ctx context.Context, method string, params []byte)
	finish(o outcome)
}

type heldNote struct {
	method string
	params []byte
}

// relay is the host.Peer of a guest call that may outlive its request.
type relay struct {
	r   *request // the request the guest serves (params, capabilities, inputs)
	mod Module

	mu      sync.Mutex
	owner   sink // nil while held
	held    []heldNote
	heldOut *outcome
}

// run calls the guest and hands its outcome to the owner.
func (rl *relay) run(ctx context.Context, params []byte) {
	reply, err := rl.mod.Call(ctx, abi.MethodToolsCall, params, rl)
	rl.finish(outcome{reply: reply, err: err})
}

// Notify implements host.Peer: list changes are broadcast at once; the rest
// goes to the owner, or is held during a hand-off.
func (rl *relay) Notify(ctx context.Context, method string, params []byte) {
	switch method {
	case abi.MethodToolsListChanged, abi.MethodPromptsListChanged, abi.MethodResourcesListChanged, abi.MethodResourceUpdated:
		(&peer{r: rl.r, mod: rl.mod}).guestNotify(method, params)
		return
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.owner == nil {
		rl.held = append(rl.held, heldNote{method: method, params: params})
		return
	}
	rl.owner.notify(ctx, method, params)
}

// Request implements host.Peer. In the modern era a guest's request is
// answered from the answers the call has (the MRTR round's, or the task's)
// or left to the client (host.ErrInputRequired), whoever owns the call; a
// legacy task sends it to the client over the session.
func (rl *relay) Request(ctx context.Context, method string, params []byte) ([]byte, error) {
	if rl.r.era == Modern {
		return (&peer{r: rl.r, mod: rl.mod}).modernRequest(ctx, method, params)
	}
	rl.mu.Lock()
	c, _ := rl.owner.(*collector)
	rl.mu.Unlock()
	if c == nil {
		return nil, &abi.Error{Code: CodeInternalError, Message: "no client to ask for this call"}
	}
	return c.request(ctx, method, params)
}

// finish hands the outcome to the owner, or holds it during a hand-off.
func (rl *relay) finish(o outcome) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.owner == nil {
		rl.heldOut = &o
		return
	}
	rl.owner.finish(o)
}

// redirect makes to the owner, replaying what was held first.
func (rl *relay) redirect(to sink) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for _, n := range rl.held {
		to.notify(context.Background(), n.method, n.params)
	}
	rl.held = nil
	rl.owner = to
	if o := rl.heldOut; o != nil {
		rl.heldOut = nil
		to.finish(*o)
	}
}

// inlineSink is the request as the owner of its guest.
type inlineSink struct {
	r    *request
	mod  Module
	done chan outcome // buffered: finish never blocks
}

func (s *inlineSink) notify(ctx context.Context, method string, params []byte) {
	(&peer{r: s.r, mod: s.mod}).Notify(ctx, method, params)
}

func (s *inlineSink) finish(o outcome) { s.done <- o }

// discard owns a guest nobody waits for any more.
type discard struct{}

func (discard) notify(context.Context, string, []byte) {}
func (discard) finish(outcome)                         {}

// toolAnswer answers a tools/call from its guest's outcome in place.
func (r *request) toolAnswer(e *toolEntry, reply *host.Reply, err error) Response {
	if err != nil && canceled(err) {
		return Response{Era: r.era}
	}
	if err == nil && len(reply.InputRequests) > 0 {
		return r.inputRequired(reply)
	}
	result, rerr := r.srv.toolOutcome(e, reply, err)
	if rerr != nil {
		return r.fail(rerr)
	}
	return r.ok(result, false)
}

// toolOutcome is the result or the JSON-RPC error a tools/call answers for
// its guest's outcome (not waiting for input): a guest that failed (trap,
// limit, broken ABI) is a tool error, as is a structuredContent that does
// not match the output schema; a JSON-RPC error of the guest is passed on.
func (s *Server) toolOutcome(e *toolEntry, reply *host.Reply, err error) ([]byte, *Error) {
	if err != nil {
		s.log.Warn("tool call failed", "tool", e.tool.Name, "err", err)
		return toolError(err.Error()), nil
	}
	if reply.Error != nil {
		return nil, &Error{Code: reply.Error.Code, Message: reply.Error.Message, Data: reply.Error.Data}
	}
	if e.schemas.Output != nil {
		if msg := checkStructured(reply.Result, e); msg != "" {
			return toolError(msg), nil
		}
	}
	return reply.Result, nil
}

// guestParams are the params the guest of the request is called with.
func (r *request) callParams() []byte {
	if r.guestParams != nil {
		return r.guestParams
	}
	return r.msg.Params
}

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
	rl := &relay{r: d, mod: e.mod, owner: in}
	go rl.run(gctx, d.callParams())

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

	t := &tasks.Task{ID: tasks.NewID(), Owner: owner, Era: tasks.Modern, Version: r.version, Tool: e.tool.Name,
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
	return r.ok(r.srv.encodeCreated(t, Modern), false)
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
	t := &tasks.Task{ID: tasks.NewID(), Owner: owner, Era: tasks.Legacy, Version: r.version, Tool: e.tool.Name,
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
		return r.ok(r.srv.encodeCreated(t, Legacy), false)
	}
	gctx, gcancel := context.WithCancelCause(ctx)
	if err := m.Create(ctx, t, slot, gcancel); err != nil {
		gcancel(err)
		return r.fail(taskError(err))
	}
	d := r.detached(sessionStream{srv: r.srv, sess: r.sess})
	col := r.srv.newCollector(t, e, d)
	rl := &relay{r: d, mod: e.mod, owner: col}
	go rl.run(gctx, d.callParams())
	return r.ok(r.srv.encodeCreated(t, Legacy), false)
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

// collector is a task as the owner of its guest: it records the outcome
// in the task and, for a legacy task, carries the guest's messages to the
// client.
type collector struct {
	srv  *Server
	id   string
	era  tasks.Era
	e    *toolEntry
	r    *request  // detached: what the guest serves
	live *liveTask // legacy: where requests to the client go
}

func (s *Server) newCollector(t *tasks.Task, e *toolEntry, r *request) *collector {
	c := &collector{srv: s, id: t.ID, era: t.Era, e: e, r: r}
	if t.Era == tasks.Legacy {
		c.live = s.liveTask(t.ID, r.sess)
	}
	return c
}

// notify passes a legacy task's progress and log messages to the session,
// tagged with the task; a modern task has no stream after its request was
// answered, so they are dropped.
func (c *collector) notify(ctx context.Context, method string, params []byte) {
	if c.era != tasks.Legacy || c.r.stream == nil {
		c.srv.log.Debug("task notification dropped: no stream after the task's request was answered", "task", c.id, "method", method)
		return
	}
	if p, err := withMeta(params, MetaRelatedTask, relatedTask(c.id)); err == nil {
		params = p
	}
	(&peer{r: c.r, mod: c.e.mod}).Notify(ctx, method, params)
}

func relatedTask(id string) []byte {
	return append(appendString([]byte(`{"taskId":`), id), '}')
}

// finish records the guest's outcome in the task.
func (c *collector) finish(o outcome) {
	m := c.srv.tasks
	defer m.Stopped(c.id)
	ctx := context.Background()
	if c.live != nil {
		defer c.srv.dropLive(c.id)
	}
	if o.err != nil && host.IsKind(o.err, host.KindCanceled) {
		// Stopped by tasks/cancel, expiry or shutdown, which ended (or
		// deleted) the task first; anything else ends it here.
		msg := "Task stopped: " + o.err.Error()
		if _, err := m.Finish(ctx, c.id, tasks.Failed, msg, nil, &tasks.Error{Code: CodeInternalError, Message: msg}); err != nil && !ignorable(err) {
			c.srv.log.Warn("recording a task's end failed", "task", c.id, "err", err)
		}
		return
	}
	if o.err == nil && len(o.reply.InputRequests) > 0 {
		c.park(ctx, o.reply)
		return
	}
	result, rerr := c.srv.toolOutcome(c.e, o.reply, o.err)
	var err error
	if rerr != nil {
		_, err = m.Finish(ctx, c.id, tasks.Failed, rerr.Message, nil, &tasks.Error{Code: rerr.Code, Message: rerr.Message, Data: rerr.Data})
	} else {
		_, err = m.Finish(ctx, c.id, tasks.Completed, "", bytes.Clone(result), nil)
	}
	if err != nil && !ignorable(err) {
		c.srv.log.Warn("recording a task's result failed", "task", c.id, "err", err)
	}
}

// ignorable reports whether recording a task's end failed only because it
// already ended or no longer exists.
func ignorable(err error) bool {
	return errors.Is(err, tasks.ErrTerminal) || errors.Is(err, tasks.ErrNotFound) || errors.Is(err, tasks.ErrClosed)
}

// park puts a modern task whose guest waits for the client into
// input_required with the guest's requests; tasks/update answers them.
func (c *collector) park(ctx context.Context, reply *host.Reply) {
	m := c.srv.tasks
	if c.era != tasks.Modern || c.r.inputs == nil {
		msg := "guest requests left unanswered outside the " + V20260728 + " revision"
		_, _ = m.Finish(ctx, c.id, tasks.Failed, msg, nil, &tasks.Error{Code: CodeInternalError, Message: msg})
		return
	}
	known := c.r.inputs.known()
	inputs := make([]tasks.InputRequest, len(reply.InputRequests))
	for i, q := range reply.InputRequests {
		inputs[i] = tasks.InputRequest{Key: q.Key, Method: q.Method, Params: q.Params}
	}
	_, err := m.Update(ctx, c.id, func(t *tasks.Task) error {
		if err := m.Move(t, tasks.InputRequired, "Waiting for input from the client"); err != nil {
			return err
		}
		t.Inputs, t.GuestState = inputs, bytes.Clone(reply.State)
		if t.Answers == nil {
			t.Answers = map[string]json.RawMessage{}
		}
		for k, v := range known {
			t.Answers[k] = v
		}
		return nil
	})
	if err != nil && !ignorable(err) {
		c.srv.log.Warn("recording a task's input requests failed", "task", c.id, "err", err)
	}
}

// request sends a legacy task's request to the client: the task waits in
// input_required until the answer comes. The request travels, tagged with
// the task, on the stream of a tasks/result call waiting for the task (the
// 2025-11-25 revision's way), so it waits for one.
func (c *collector) request(ctx context.Context, method string, params []byte) ([]byte, error) {
	r := c.r
	if e := r.requiredCapability(method, params); e != nil {
		return nil, e
	}
	if p, err := withMeta(params, MetaRelatedTask, relatedTask(c.id)); err == nil {
		params = p
	}
	c.live.asking(c.srv, 1)
	defer c.live.asking(c.srv, -1)
	for {
		// The session of the tasks/result call gets the client's answer.
		st, sess, err := c.live.stream(ctx)
		if err != nil {
			return nil, err
		}
		m, err := sess.request(ctx, st, method, params)
		if errors.Is(err, errStreamClosed) {
			continue // that tasks/result ended: wait for another
		}
		if err != nil {
			return nil, err
		}
		if m.Error != nil {
			return nil, &abi.Error{Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data}
		}
		return m.Result, nil
	}
}

// liveTask is what the server keeps of a legacy task whose guest runs here:
// the streams (and sessions) of the tasks/result calls waiting for it.
type liveTask struct {
	id   string
	sess *Session // the session that created the task

	mu      sync.Mutex
	streams []offered
	added   chan struct{} // closed when a stream is added
	askers  int           // requests to the client in flight
}

func (s *Server) liveTask(id string, sess *Session) *liveTask {
	lt := &liveTask{id: id, sess: sess, added: make(chan struct{})}
	s.mu.Lock()
	s.live[id] = lt
	s.mu.Unlock()
	return lt
}

func (s *Server) dropLive(id string) {
	s.mu.Lock()
	delete(s.live, id)
	s.mu.Unlock()
}

func (s *Server) lookupLive(id string) *liveTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// offered is the stream of a waiting tasks/result call and its session.
type offered struct {
	g    *guardStream
	sess *Session
}

// offer makes a tasks/result call's stream available to the task's
// requests until the returned function is called.
func (lt *liveTask) offer(st Stream, sess *Session) (withdraw func()) {
	g := &guardStream{s: st}
	lt.mu.Lock()
	lt.streams = append(lt.streams, offered{g: g, sess: sess})
	close(lt.added)
	lt.added = make(chan struct{})
	lt.mu.Unlock()
	return func() {
		g.close()
		lt.mu.Lock()
		for i, x := range lt.streams {
			if x.g == g {
				lt.streams = append(lt.streams[:i], lt.streams[i+1:]...)
				break
			}
		}
		lt.mu.Unlock()
	}
}

// stream waits for a stream to send the task's requests on.
func (lt *liveTask) stream(ctx context.Context) (Stream, *Session, error) {
	for {
		lt.mu.Lock()
		if n := len(lt.streams); n > 0 {
			o := lt.streams[n-1]
			lt.mu.Unlock()
			return o.g, o.sess, nil
		}
		added := lt.added
		lt.mu.Unlock()
		select {
		case <-added:
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
	}
}

// asking counts the task's requests to the client in flight and moves the
// task between working and input_required accordingly.
func (lt *liveTask) asking(s *Server, delta int) {
	lt.mu.Lock()
	lt.askers += delta
	n := lt.askers
	lt.mu.Unlock()
	m := s.tasks
	_, err := m.Update(context.Background(), lt.id, func(t *tasks.Task) error {
		switch {
		case n > 0 && t.Status == tasks.Working:
			return m.Move(t, tasks.InputRequired, "Waiting for the client to answer a request")
		case n == 0 && t.Status == tasks.InputRequired:
			return m.Move(t, tasks.Working, "")
		}
		return errUnchanged
	})
	if err != nil && !errors.Is(err, errUnchanged) && !ignorable(err) {
		s.log.Warn("recording a task's state failed", "task", lt.id, "err", err)
	}
}

var errUnchanged = errors.New("unchanged")

// guardStream is a stream that stops passing messages once closed; close
// waits for a Send in progress.
type guardStream struct {
	mu     sync.Mutex
	s      Stream
	closed bool
}

var errStreamClosed = errors.New("stream closed")

func (g *guardStream) Send(ctx context.Context, msg []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errStreamClosed
	}
	return g.s.Send(ctx, msg)
}

func (g *guardStream) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
