package check

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// recorder is the module as the check's server sees it: it calls the
// loaded module and records, for each call, what the guest itself wrote —
// its answer or how it failed, its notifications and requests as it wrote
// them (before the server's peer stamps or filters them), the lines it
// wrote after answering, and the runner's figures.
type recorder struct {
	m *host.Module

	mu    sync.Mutex
	calls []*callRecord
}

var _ protocol.Module = (*recorder)(nil)

// callRecord is one guest call.
type callRecord struct {
	method string
	reply  *contract.Reply
	err    error
	stats  contract.CallStats

	mu       sync.Mutex
	notes    []message
	requests []guestRequest
}

// message is a notification as the guest wrote it.
type message struct {
	method string
	params json.RawMessage
}

// guestRequest is a request of the guest to the client and what it got.
type guestRequest struct {
	method string
	params json.RawMessage
	answer string // "result" or the error's text
}

func (r *recorder) Name() string                                     { return r.m.Name() }
func (r *recorder) Description() *abi.Description                    { return r.m.Description() }
func (r *recorder) Schemas(tool string) (contract.ToolSchemas, bool) { return r.m.Schemas(tool) }

func (r *recorder) Call(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
	rec := &callRecord{method: method}
	reply, err := r.m.Call(contract.WithCallStats(ctx, &rec.stats), method, params, &recPeer{peer: peer, rec: rec})
	rec.reply, rec.err = reply, err
	r.mu.Lock()
	r.calls = append(r.calls, rec)
	r.mu.Unlock()
	return reply, err
}

// count is the number of guest calls so far.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// since returns the calls made after the first n.
func (r *recorder) since(n int) []*callRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*callRecord(nil), r.calls[n:]...)
}

// recPeer records what the guest sends outward and passes it on to the
// server's peer.
type recPeer struct {
	peer contract.Peer
	rec  *callRecord
}

func (p *recPeer) Notify(ctx context.Context, method string, params []byte) {
	p.rec.mu.Lock()
	p.rec.notes = append(p.rec.notes, message{method, append(json.RawMessage(nil), params...)})
	p.rec.mu.Unlock()
	if p.peer != nil {
		p.peer.Notify(ctx, method, params)
	}
}

func (p *recPeer) Request(ctx context.Context, method string, params []byte) ([]byte, error) {
	var res []byte
	var err error
	if p.peer != nil {
		res, err = p.peer.Request(ctx, method, params)
	} else {
		err = &abi.Error{Code: abi.CodeInternalError, Message: "no client"}
	}
	answer := "result"
	if err != nil {
		answer = err.Error()
	}
	p.rec.mu.Lock()
	p.rec.requests = append(p.rec.requests, guestRequest{method, append(json.RawMessage(nil), params...), answer})
	p.rec.mu.Unlock()
	return res, err
}
