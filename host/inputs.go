package host

import (
	"sort"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// inputRequest is a guest request left to the client's retry, with its
// rank among the requests the guest sent.
type inputRequest struct {
	contract.InputRequest
	order int
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
		reqs := make([]contract.InputRequest, len(c.inputs))
		for i := range c.inputs {
			reqs[i] = c.inputs[i].InputRequest
		}
		c.reply = &contract.Reply{InputRequests: reqs, State: c.state}
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
	c.inputs = append(c.inputs, inputRequest{InputRequest: contract.InputRequest{Key: key, Method: method, Params: params}, order: order})
	c.mu.Unlock()
	return true
}

// setState records the guest's abi.MethodState notification.
func (c *call) setState(params []byte) {
	var p struct {
		State jsonrpc.Raw `json:"state"`
	}
	if err := sonic.Unmarshal(params, &p); err != nil || len(p.State) == 0 {
		c.log.Debug("guest state notification without state; ignored", "module", c.m.name, "call", c.id)
		return
	}
	c.mu.Lock()
	c.state = []byte(p.State)
	c.mu.Unlock()
}
