package host

import (
	"context"
	"errors"
	"sort"

	"github.com/bytedance/sonic"
)

// ErrInputRequired is what Peer.Request returns when the client cannot be
// asked during this call (the 2026-07-28 revision's multi round-trip
// requests): the host then leaves the guest's request unanswered and
// records it. Once the guest waits on stdin with every request it still has
// open recorded this way, the host ends the instance and Call returns a
// Reply whose InputRequests lists them; the client answers them in a retry.
// A guest that answers its own request anyway wins: its Reply is returned
// as usual.
var ErrInputRequired = errors.New("host: input required from the client")

// InputRequest is a guest's request to the client that was left unanswered
// because Peer.Request returned ErrInputRequired.
type InputRequest struct {
	// Key is the guest's request id: a string id as is, an integer id as
	// its decimal text.
	Key string
	// Method is elicitation/create, sampling/createMessage or roots/list.
	Method string
	// Params is the raw params object the guest sent.
	Params []byte

	order int // the request's rank among those the guest sent
}

// MethodState is the notification a guest sends to leave state for the
// retry of a call that ends with input requests: params {"state": <any
// JSON value>}. The last one sent counts; Reply.State carries it.
const MethodState = "wasmcp/state"

type inputKeyCtx struct{}

// InputKey returns the key of the guest request a Peer.Request call serves
// (the key an InputRequest would carry), "" when ctx is not one the host
// passed to Peer.Request.
func InputKey(ctx context.Context) string {
	k, _ := ctx.Value(inputKeyCtx{}).(string)
	return k
}

// WithInputKey returns ctx carrying key as the guest request key that
// InputKey reports. The host sets it for every Peer.Request; other
// implementations of a module (tests, adapters) use it to do the same.
func WithInputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, inputKeyCtx{}, key)
}

// inputKey turns a guest request id into its key. ok is false for an id
// that is neither a string nor an integer.
func inputKey(id []byte) (string, bool) {
	if len(id) == 0 {
		return "", false
	}
	if id[0] == '"' {
		var s string
		if err := sonic.Unmarshal(id, &s); err != nil {
			return "", false
		}
		return s, true
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return string(id), true
}

// stall ends a call whose guest waits for input only the client's retry can
// give: the recorded input requests become the call's Reply.
func (c *call) stall() {
	c.mu.Lock()
	if c.reply == nil && c.violation == nil {
		// Peer answers may finish in any order; report the guest's.
		sort.Slice(c.inputs, func(i, j int) bool { return c.inputs[i].order < c.inputs[j].order })
		c.reply = &Reply{InputRequests: c.inputs, State: c.state}
	}
	c.mu.Unlock()
	c.stdin.close()
	c.cancel(errAnswered)
}

// deferInput records a guest request the peer left to the client's retry.
// It reports false (having failed the call) when the key repeats one
// already recorded.
func (c *call) deferInput(order int, key, method string, params []byte) bool {
	c.mu.Lock()
	for _, in := range c.inputs {
		if in.Key == key {
			c.mu.Unlock()
			c.protocolError("sent two requests to the client with the id %q", key)
			return false
		}
	}
	c.inputs = append(c.inputs, InputRequest{Key: key, Method: method, Params: params, order: order})
	c.mu.Unlock()
	return true
}

// setState records the guest's wasmcp/state notification.
func (c *call) setState(params []byte) {
	var p struct {
		State rawValue `json:"state"`
	}
	if err := sonic.Unmarshal(params, &p); err != nil || len(p.State) == 0 {
		c.log.Debug("guest state notification without state; ignored", "module", c.m.name, "call", c.id)
		return
	}
	c.mu.Lock()
	c.state = []byte(p.State)
	c.mu.Unlock()
}
