package protocol

import (
	"context"
	"sync"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

// outcome is how a guest call ended.
type outcome struct {
	reply *contract.Reply
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

// relay is the contract.Peer of a guest call that may outlive its request.
type relay struct {
	r     *request // the request the guest serves (params, capabilities, inputs)
	mod   Module
	entry *toolEntry

	mu      sync.Mutex
	owner   sink // nil while held
	held    []heldNote
	heldOut *outcome
}

// launch starts the guest of a tools/call that may become (or is) a task
// on its own goroutine, with a relay as its peer: r is the detached request
// the guest serves, owner the first owner of its messages and outcome. It
// is the one way the inline window, a legacy task and a resumed modern task
// start a guest.
func launch(ctx context.Context, r *request, e *toolEntry, owner sink) *relay {
	rl := &relay{r: r, mod: e.mod, entry: e, owner: owner}
	go rl.run(ctx, r.callParams())
	return rl
}

// run calls the guest and hands its outcome to the owner.
func (rl *relay) run(ctx context.Context, params []byte) {
	reply, err := rl.r.srv.measuredCall(ctx, rl.entry, func(ctx context.Context) (*contract.Reply, error) {
		return rl.r.callGuest(ctx, rl.mod, abi.MethodToolsCall, params, rl)
	})
	rl.finish(outcome{reply: reply, err: err})
}

// Notify implements contract.Peer: list changes are broadcast at once; the rest
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

// Request implements contract.Peer. In the modern era a guest's request is
// answered from the answers the call has (the MRTR round's, or the task's)
// or left to the client (contract.ErrInputRequired), whoever owns the call; a
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
