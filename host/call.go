package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bytedance/sonic"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// maxOutstanding caps the requests a guest may have open at once: sent
// and not yet answered, or answered and the answer not yet read.
const maxOutstanding = 16

// Call runs one request in a fresh instance of the module and returns the
// guest's answer. params is the raw params object (may be nil). A failure of
// the guest (trap, exit, broken ABI, broken limit) or of the caller
// (cancellation) is a *GuestError; the module stays usable either way.
//
// A module not compiled yet (or whose code the engine's code budget
// closed) is compiled first, and the call waits for it; concurrent calls
// share one compilation (code.go).
func (m *Module) Call(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
	if st := contract.CallStatsFrom(ctx); st != nil {
		return m.measuredCall(ctx, method, params, peer, st)
	}
	return m.call(ctx, method, params, peer, nil)
}

// RunClosedStdin runs the module once in a fresh instance, under its
// policy, with stdin at end of file from the start: no request at all. The
// ABI expects a guest whose stdin closes to end; a conformance check (wasmcp
// check) uses this to see that it does. It returns the guest's exit code
// when it ended by returning (0) or exiting, and a *GuestError when it
// trapped, broke a limit (a guest that waits forever meets its deadline),
// wrote a message although it had no request, or ctx ended.
func (m *Module) RunClosedStdin(ctx context.Context) (exitCode uint32, err error) {
	code, held, err := m.slot.acquire(ctx, m, true)
	if err != nil {
		return 0, err
	}
	defer m.slot.release(m, code, held)
	_, err = m.callWith(ctx, code, "", nil, nil, 0, nil)
	var ge *GuestError
	if !errors.As(err, &ge) || ge.Kind != KindExit {
		if err == nil {
			// Unreachable: without a request no answer can count.
			err = &GuestError{Module: m.name, Kind: KindProtocol, Msg: "answered a request it was never sent"}
		}
		return 0, err
	}
	var exit *sys.ExitError
	if errors.As(ge.Err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, nil
}

// measuredCall is Call filling st.
func (m *Module) measuredCall(ctx context.Context, method string, params []byte, peer contract.Peer, st *contract.CallStats) (*contract.Reply, error) {
	reply, err := m.call(ctx, method, params, peer, st)
	var ge *GuestError
	if errors.As(err, &ge) {
		st.Failure = string(ge.Kind)
		if ge.Kind == KindLimit {
			st.Limit = limitName(ge.Msg)
		}
	}
	return reply, err
}

// limitName is the limit a KindLimit error's message names: one of a fixed
// set, so that it may label a metric.
func limitName(msg string) string {
	if i := strings.LastIndex(msg, "(limit "); i >= 0 {
		if j := strings.IndexByte(msg[i:], ')'); j > 0 {
			switch name := msg[i+len("(limit ") : i+j]; name {
			case "timeout", "memory", "output", "line":
				return name
			}
		}
	}
	switch {
	case strings.Contains(msg, "max_queue"):
		return "queue"
	case strings.Contains(msg, "--memory-budget"):
		return "budget"
	}
	return "other"
}

func (m *Module) call(ctx context.Context, method string, params []byte, peer contract.Peer, st *contract.CallStats) (*contract.Reply, error) {
	code, held, err := m.slot.acquire(ctx, m, true)
	if err != nil {
		return nil, err
	}
	defer m.slot.release(m, code, held)
	return m.callWith(ctx, code, method, params, peer, 0, st)
}

// callWith runs a call on the given code; a positive budget shortens the
// module's timeout (describe runs at load).
func (m *Module) callWith(ctx context.Context, code *compiled, method string, params []byte, peer contract.Peer, budget time.Duration, st *contract.CallStats) (*contract.Reply, error) {
	var t0 time.Time
	if st != nil {
		t0 = time.Now()
	}
	if err := m.gate.acquire(ctx, m.name); err != nil {
		return nil, err
	}
	defer m.gate.release()
	// The instance's linear memory comes from the pool (memory.go) and
	// goes back, zeroed, once the instance is closed; it is charged to
	// the engine's memory budget as it grows. A run at load (budget > 0)
	// waits for the budget as long as its context lasts.
	mem := &callMemory{budget: m.engine.mem, charge: memCharge{module: m.name, principal: m.engine.principalOf(ctx)}, paid: code.prepaid, image: code.image}
	wait := m.engine.mem.waitFor()
	if budget > 0 {
		wait = 0
	}
	waitStart := time.Now()
	if err := m.engine.mem.acquire(ctx, &mem.charge, code.cost, wait); err != nil {
		return nil, err
	}
	defer m.engine.mem.release(&mem.charge)
	if mem.charge.queued && budget > 0 {
		m.engine.log.Info("a run at load waited for room in the memory budget; its deadline starts now",
			"module", m.name, "method", method, "waited", time.Since(waitStart).Round(time.Millisecond))
	}
	m.engine.idle.begin()
	defer m.engine.idle.end()
	if st != nil {
		st.Tier = code.tier.String()
		t1 := time.Now()
		st.QueueWait = t1.Sub(t0)
		t0 = t1
	}

	id := m.seq.Add(1)
	c := &call{m: m, code: code, id: id, peer: peer, limits: m.policy.Limits}
	c.idText = strconv.AppendInt(nil, id, 10)
	c.log = m.engine.log

	ctx, cancel := context.WithCancelCause(ctx)
	c.ctx, c.cancel = ctx, cancel
	var tctx context.Context
	var stop context.CancelFunc
	if budget > 0 {
		// A run at load: its deadline counts the guest's own time
		// (guesttime.go), under a wall-clock ceiling.
		limit, what := budget, "--describe-timeout"
		if c.limits.Timeout < limit {
			limit, what = c.limits.Timeout, "limit timeout"
		}
		gt, unlock := startGuestTime()
		defer unlock()
		c.guest = gt
		ceiling := m.engine.loadCeiling(limit)
		c.limits.Timeout = ceiling
		tctx, stop = context.WithTimeoutCause(ctx, ceiling, cutByCeiling(what, limit, -1, ceiling))
		stopWatch := gt.watch(tctx, cancel, limit, ceiling,
			func(used time.Duration) error {
				_, ok := gt.used()
				return overDeadline(fmt.Sprintf("deadline of %s exceeded (%s)", limit, what), used, ok)
			},
			func(used, wall time.Duration) error { return cutByCeiling(what, limit, used, wall) })
		defer stopWatch()
	} else {
		tctx, stop = context.WithTimeoutCause(ctx, c.limits.Timeout, m.timeoutCause(c.limits.Timeout))
	}
	defer stop()
	c.ctx = tctx

	var first []byte
	switch {
	case method == "":
		// RunClosedStdin: no request (nor handshake), stdin at end of
		// file at once, and no id an answer could carry.
		c.idText = nil
	case m.mcp != nil || method == methodDiscover:
		// An MCP server: the host's handshake comes first (mcpserver.go).
		first = c.startMCP(method, params)
	default:
		first = requestLine(c.idText, method, params)
	}
	if method != "" && (m.mcp != nil || method == methodDiscover || (method == abi.MethodDescribe && m.policy.Mode == ModeAuto)) {
		// stdin may turn non-blocking (stdinListener): an MCP server
		// needs it, and the describe run of a module that may be one
		// too, to answer wasmcp/describe at all.
		c.ctx = context.WithValue(tctx, callKey{}, c)
	}
	c.stdin = newInbox(tctx, first)
	c.stdin.guest = c.guest
	if method == "" {
		c.stdin.close()
	}
	c.stdin.onStall = c.stall
	c.stdout.c, c.stderr.c = c, c
	c.stderr.discard = m.policy.DiscardStderr
	base := m.base
	if code.base != nil {
		base = code.base
	}
	var cfg wazero.ModuleConfig
	if m.mounts != nil {
		var fsc wazero.FSConfig
		fsc, c.writes = fsConfig(m.mounts)
		defer endRuns(c.writes) // after the instance, and its files, are closed below
		c.ctx = context.WithValue(c.ctx, writesKey{}, c.writes)
		cfg = base.WithStdin(c.stdin).WithStdout(&c.stdout).WithStderr(&c.stderr).WithNanosleep(c.sleep).WithFSConfig(fsc)
	} else {
		io := code.ios.get(base, c)
		cfg = io.cfg
		defer code.ios.put(io) // deferred before mem.release: runs after the instance is closed
	}

	defer mem.release()
	mod, err := code.runtime.InstantiateModule(experimental.WithMemoryAllocator(tctx, mem), code.code, cfg)
	if st != nil {
		t1 := time.Now()
		st.Instantiate = t1.Sub(t0)
		t0 = t1
	}
	if err != nil {
		cancel(errAnswered)
		if cause := context.Cause(tctx); cause != nil && !errors.Is(cause, errAnswered) {
			return c.outcome(err, nil)
		}
		return nil, &GuestError{Module: m.name, Kind: KindTrap, Msg: "could not be instantiated: " + trimTrap(err.Error()), Err: err}
	}
	if code.interrupt {
		// The instrumented loops trap once the call's context ends.
		if g, ok := mod.ExportedGlobal(interruptExport).(api.MutableGlobal); ok {
			stopAfter := context.AfterFunc(tctx, func() { g.Set(1) })
			defer stopAfter()
			// The answer sets the flag itself, on the guest's own
			// goroutine: ending the context would start a goroutine
			// (and wake a thread) for it on every call.
			c.interrupt = func() {
				if stopAfter() {
					g.Set(1)
				}
			}
		}
	}
	if start := code.start(mod); start != nil {
		// The module's start function, which the instrumentation moved
		// out of instantiation so that the deadline can stop it (the flag
		// is armed above); nothing else has run in the instance yet.
		if _, err := start.Call(c.ctx); err != nil {
			cancel(errAnswered)
			_ = mod.Close(context.Background())
			if cause := context.Cause(tctx); cause != nil && !errors.Is(cause, errAnswered) {
				return c.outcome(err, nil)
			}
			return nil, &GuestError{Module: m.name, Kind: KindTrap, Msg: "could not be instantiated: its start function failed: " + trimTrap(err.Error()), Err: err}
		}
	}
	if state := code.snap.state; state != nil {
		if err := applyState(mod, state); err != nil {
			if be := mem.budgetError(m.name); be != nil {
				return nil, be
			}
			return nil, &GuestError{Module: m.name, Kind: KindTrap, Msg: "could not be given its snapshot: " + err.Error(), Err: err}
		}
	}
	err = c.run(mod)
	if st != nil {
		st.Run = time.Since(t0)
		if mem := mod.Memory(); mem != nil {
			st.MemoryBytes = uint64(mem.Size())
		}
	}
	cancel(errAnswered)
	c.pending.Wait()
	c.stderr.flush()
	if st != nil {
		c.mu.Lock()
		st.OutputBytes = c.written
		st.AfterAnswer = c.late
		c.mu.Unlock()
	}
	reply, err := c.outcome(err, mod)
	_ = mod.Close(context.Background())
	if msg := spent(c.writes); msg != "" {
		c.log.Warn("a call's writes reached a mount's write budget", "module", m.name, "why", msg)
		var ge *GuestError
		if err != nil && errors.As(err, &ge) && ge.Kind != KindCanceled {
			ge.Msg += "; " + msg
			ge.Kind = KindLimit
		}
	}
	if err != nil {
		if be := mem.budgetError(m.name); be != nil && !IsKind(err, KindCanceled) {
			// The guest failed after a memory.grow the budget refused:
			// that is the reason to report.
			return nil, be
		}
	}
	return reply, err
}

// sleep is the guest's nanosleep (poll_oneoff on a clock, e.g. Go's
// time.Sleep). It wakes when the call ends: wazero's own sleep cannot be
// interrupted, so a guest sleeping for an hour would hold the call, its
// instance slot and its goroutine past the deadline. Once the call has
// ended it does not return to the guest at all: it ends the instance
// (wazero turns the panic into the call's error), so a guest cannot go on
// to answer after its deadline.
func (c *call) sleep(ns int64) {
	if ns > 0 {
		t := time.NewTimer(time.Duration(ns))
		defer t.Stop()
		waited := c.guest.waitUpTo(time.Duration(ns))
		select {
		case <-t.C:
		case <-c.ctx.Done():
		}
		waited()
	}
	if c.ctx.Err() != nil {
		panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
	}
}

// expired reports whether the call has ended (deadline, cancellation or a
// broken limit) or its deadline has passed, even if the timer that ends
// its context has not fired yet: an answer then must not count.
func (c *call) expired() bool {
	if c.ctx.Err() != nil {
		return true
	}
	dl, ok := c.ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// call is the state of one Call.
type call struct {
	m      *Module
	code   *compiled
	id     int64
	idText []byte
	peer   contract.Peer
	limits Limits
	mcp    *mcpCall // set when the module is an MCP server (mcpserver.go)
	// fdstat is where the guest's fd_fdstat_get of stdin writes, plus
	// one, between stdinListener's Before and After; else 0.
	fdstat uint32
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelCauseFunc
	// guest counts the guest's own time of a run at load (guesttime.go);
	// nil for a tools/call, whose deadline is wall time.
	guest *guestTime
	// interrupt, for an instrumented module, makes its loops trap at once
	// (answer); the call's context ending does the same, asynchronously.
	interrupt func()

	stdin  *inbox
	stdout lineWriter
	stderr logWriter

	mu          sync.Mutex
	written     int64
	reply       *contract.Reply
	violation   error
	outstanding int
	pending     sync.WaitGroup
	late        int             // lines written after the answer
	sent        int             // requests the guest sent to the client
	inputs      []inputRequest  // requests left to the client's retry
	state       []byte          // the guest's wasmcp/state
	net         *egress.Session // outbound HTTP (http.go), on first use
	writes      []*writeBudget  // the run's budgets of its read-write mounts (writebudget.go)
}

func (c *call) run(mod api.Module) error {
	if c.code.reactor {
		if c.code.init {
			if _, err := mod.ExportedFunction("_initialize").Call(c.ctx); err != nil {
				return err
			}
		}
		_, err := mod.ExportedFunction(abi.ReactorEntry).Call(c.ctx)
		return err
	}
	_, err := mod.ExportedFunction("_start").Call(c.ctx)
	return err
}

// fail records the first violation and ends the instance.
func (c *call) fail(err error) {
	c.mu.Lock()
	if c.violation == nil && c.reply == nil {
		c.violation = err
	}
	c.mu.Unlock()
	c.cancel(err)
}

func (c *call) protocolError(format string, a ...any) error {
	return c.protocolErrorKind(KindProtocol, format, a...)
}

func (c *call) protocolErrorKind(k Kind, format string, a ...any) error {
	err := &GuestError{Module: c.m.name, Kind: k, Msg: fmt.Sprintf(format, a...)}
	c.fail(err)
	return err
}

// outcome turns the run's error and the recorded state into the result.
func (c *call) outcome(runErr error, mod api.Module) (*contract.Reply, error) {
	c.mu.Lock()
	reply, violation := c.reply, c.violation
	c.mu.Unlock()
	if reply != nil {
		return reply, nil
	}
	if violation != nil {
		return nil, violation
	}
	name := c.m.name
	var le *limitError
	if cause := context.Cause(c.ctx); cause != nil && !errors.Is(cause, errAnswered) {
		if errors.As(cause, &le) {
			return nil, &GuestError{Module: name, Kind: KindLimit, Msg: le.msg}
		}
		var be *busyError
		if errors.As(cause, &be) {
			return nil, &GuestError{Module: name, Kind: KindLimit, Msg: be.msg, Err: be}
		}
		return nil, &GuestError{Module: name, Kind: KindCanceled, Msg: "call canceled", Err: cause}
	}
	tail := c.stderr.lastLine()
	if tail != "" {
		tail = " (stderr: " + tail + ")"
	}
	var exit *sys.ExitError
	switch {
	case runErr == nil, errors.As(runErr, &exit) && exit.ExitCode() == 0:
		return nil, &GuestError{Module: name, Kind: KindExit, Msg: "exited without answering" + tail}
	case errors.As(runErr, &exit):
		msg := fmt.Sprintf("exited with code %d before answering%s", exit.ExitCode(), tail)
		if c.nearMemoryLimit(mod) {
			msg += fmt.Sprintf("; its memory reached the limit of %s (limit memory)", FormatBytes(int64(c.limits.MemoryBytes)))
			return nil, &GuestError{Module: name, Kind: KindLimit, Msg: msg, Err: runErr}
		}
		return nil, &GuestError{Module: name, Kind: KindExit, Msg: msg, Err: runErr}
	default:
		msg := "trapped: " + trimTrap(runErr.Error()) + tail
		if c.nearMemoryLimit(mod) {
			msg += fmt.Sprintf("; its memory reached the limit of %s (limit memory)", FormatBytes(int64(c.limits.MemoryBytes)))
		}
		return nil, &GuestError{Module: name, Kind: KindTrap, Msg: msg, Err: runErr}
	}
}

// nearMemoryLimit reports whether the instance's memory is within 1 MiB of
// its cap, which makes the cap the likely reason for a crash.
func (c *call) nearMemoryLimit(mod api.Module) bool {
	if mod == nil || mod.Memory() == nil {
		return false
	}
	return uint64(mod.Memory().Size())+(1<<20) >= uint64(c.limits.memoryPages())*65536
}

// trimTrap keeps the first line of a wazero error (the wasm stack trace
// that follows is for the log, not the client).
func trimTrap(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		s = s[:i]
	}
	// The interpreter tier says "wasm error: stack overflow" where the
	// compiled code says "stack overflow": one message for both tiers.
	return strings.Replace(s, "wasm error: stack overflow", "stack overflow", 1)
}

// count charges n output bytes against the limit.
func (c *call) count(n int) error {
	c.mu.Lock()
	c.written += int64(n)
	over := c.written > c.limits.OutputBytes
	c.mu.Unlock()
	if over {
		err := &GuestError{Module: c.m.name, Kind: KindLimit,
			Msg: fmt.Sprintf("wrote more than %s to stdout and stderr (limit output)", FormatBytes(c.limits.OutputBytes))}
		c.fail(err)
		return err
	}
	return nil
}

// handleLine processes one complete line from the guest's stdout. line may
// alias guest memory, so it is copied once before decoding: everything
// decoded from it may then be kept.
func (c *call) handleLine(line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	line = bytes.Clone(line)
	c.mu.Lock()
	answered, stalled := c.reply != nil, c.reply != nil && len(c.reply.InputRequests) > 0
	if answered && !stalled {
		c.late++
	}
	c.mu.Unlock()
	if answered {
		if stalled {
			// The guest saw stdin end while it waited for input.
			c.log.DebugContext(c.ctx, "guest wrote after its call ended for input; ignored", "module", c.m.name, "call", c.id, "bytes", len(line))
		} else {
			c.log.WarnContext(c.ctx, "guest wrote after answering; ignored", "module", c.m.name, "call", c.id, "bytes", len(line))
		}
		return nil
	}
	var msg struct {
		JSONRPC string      `json:"jsonrpc"`
		ID      jsonrpc.Raw `json:"id"`
		Method  string      `json:"method"`
		Params  jsonrpc.Raw `json:"params"`
		Result  jsonrpc.Raw `json:"result"`
		Error   *abi.Error  `json:"error"`
	}
	if err := sonic.Unmarshal(line, &msg); err != nil {
		return c.protocolError("wrote a line that is not a JSON-RPC message: %q", shorten(string(line)))
	}
	if msg.JSONRPC != "2.0" {
		return c.protocolError(`wrote a message without "jsonrpc": "2.0"`)
	}
	hasID := len(msg.ID) > 0 && string(msg.ID) != "null"
	switch {
	case msg.Method != "" && hasID:
		return c.guestRequest(msg.Method, msg.ID, msg.Params)
	case msg.Method != "":
		switch msg.Method {
		case abi.MethodProgress, abi.MethodLog, abi.MethodToolsListChanged, abi.MethodPromptsListChanged,
			abi.MethodResourcesListChanged, abi.MethodResourceUpdated:
			if c.peer != nil {
				c.peer.Notify(c.ctx, msg.Method, msg.Params)
			}
		case abi.MethodState:
			c.setState(msg.Params)
		default:
			c.log.DebugContext(c.ctx, "guest notification ignored", "module", c.m.name, "call", c.id, "method", msg.Method)
		}
		return nil
	case hasID:
		if c.mcp != nil && !bytes.Equal(msg.ID, c.idText) {
			if ok, err := c.mcpResponse(msg.ID, msg.Result, msg.Error); ok {
				return err
			}
		}
		if !bytes.Equal(msg.ID, c.idText) {
			return c.protocolError("answered with id %s; the request's id was %d", shorten(string(msg.ID)), c.id)
		}
		if msg.Error == nil && len(msg.Result) == 0 {
			return c.protocolError("answered with neither result nor error")
		}
		r := &contract.Reply{Error: msg.Error}
		if msg.Error == nil {
			r.Result = msg.Result
		}
		c.answer(r)
		return nil
	default:
		return c.protocolError("wrote a message that is neither request, notification nor response: %q", shorten(string(line)))
	}
}

// answer records the guest's answer and ends the instance; an answer after
// the call's end does not count.
func (c *call) answer(r *contract.Reply) {
	late := c.expired()
	c.mu.Lock()
	if c.violation == nil && !late {
		c.reply = r
	}
	c.mu.Unlock()
	if late {
		// Past the deadline (or canceled): the answer does not
		// count; outcome reports why the call ended.
		c.log.Debug("guest answered after its call ended; ignored", "module", c.m.name, "call", c.id)
		if c.ctx.Err() == nil {
			// The deadline has passed but its timer has not
			// fired yet: end the call with the same cause.
			c.cancel(&limitError{fmt.Sprintf("deadline of %s exceeded (limit timeout)", c.limits.Timeout)})
		}
		return
	}
	// The instance is no longer needed: end it (a guest that keeps
	// running after answering would only burn its deadline), unless the
	// engine is to see what it does next.
	c.stdin.close()
	if c.m.engine.cfg.RunAfterAnswer {
		return
	}
	if c.interrupt != nil {
		c.interrupt()
	}
	c.cancel(errAnswered)
}

// guestRequest forwards a guest's request to the client asynchronously; the
// answer goes to the guest's stdin.
func (c *call) guestRequest(method string, id, params []byte) error {
	key, ok := inputKey(id)
	if !ok {
		return c.protocolError("sent a request whose id %s is neither a string nor an integer", shorten(string(id)))
	}
	switch method {
	case abi.MethodSample, abi.MethodElicit, abi.MethodListRoots:
	case abi.MethodHTTP:
		return c.httpRequest(id, params)
	case "ping":
		if c.mcp != nil {
			// An MCP server may ping its client; the host answers.
			c.stdin.push(resultLine(id, []byte(`{}`)))
			return nil
		}
		c.stdin.push(errorLine(id, abi.CodeMethodNotFound, "method not available to guests: "+method, nil))
		return nil
	default:
		c.stdin.push(errorLine(id, abi.CodeMethodNotFound, "method not available to guests: "+method, nil))
		return nil
	}
	unread := c.stdin.unreadAnswers()
	c.mu.Lock()
	if c.outstanding+unread >= maxOutstanding {
		c.mu.Unlock()
		return c.protocolError("has more than %d requests to the client outstanding", maxOutstanding)
	}
	c.outstanding++
	c.sent++
	order := c.sent
	c.mu.Unlock()
	c.stdin.begin()
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		answer := func(line []byte) {
			c.mu.Lock()
			c.outstanding--
			c.mu.Unlock()
			c.stdin.answer(line)
		}
		if c.peer == nil {
			answer(errorLine(id, abi.CodeInternalError, "no client is attached to this call", nil))
			return
		}
		res, err := c.peer.Request(contract.WithInputKey(c.ctx, key), method, params)
		if err != nil {
			var ae *abi.Error
			switch {
			case errors.Is(err, contract.ErrInputRequired):
				// Left to the client's retry: the request stays
				// outstanding and unanswered.
				if c.deferInput(order, key, method, params) {
					c.stdin.deferred()
				}
			case errors.As(err, &ae):
				answer(errorLine(id, ae.Code, ae.Message, ae.Data))
			default:
				answer(errorLine(id, abi.CodeInternalError, err.Error(), nil))
			}
			return
		}
		answer(resultLine(id, res))
	}()
	return nil
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// requestLine is the call's request to the guest, one line: params (the
// client's bytes, possibly indented) lose their line breaks.
func requestLine(id []byte, method string, params []byte) []byte {
	params = oneLine(params)
	b := jsonrpc.AppendRequest(make([]byte, 0, 64+len(method)+len(params)), id, method, params)
	return append(b, '\n')
}

// resultLine answers a guest's request with a result, one line.
func resultLine(id, result []byte) []byte {
	result = oneLine(result)
	return append(jsonrpc.AppendResponse(make([]byte, 0, 41+len(id)+len(result)), id, result), '\n')
}

// errorLine answers a guest's request with an error, one line.
func errorLine(id []byte, code int, msg string, data []byte) []byte {
	data = oneLine(data)
	b := jsonrpc.AppendError(make([]byte, 0, 81+len(id)+len(msg)+len(data)), id, code, msg, data)
	return append(b, '\n')
}

var _ io.Reader = (*inbox)(nil)

// oneLine returns JSON text b without its raw line breaks, so it fits on one
// line to the guest. JSON forbids a raw CR or LF inside a string, so every
// one is whitespace between tokens and dropping it keeps the value; b is
// returned as is (no copy) when it has none, the common case.
func oneLine(b []byte) []byte {
	if bytes.IndexAny(b, "\r\n") < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != '\n' && c != '\r' {
			out = append(out, c)
		}
	}
	return out
}
