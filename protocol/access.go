package protocol

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/tasks"
)

// The kinds of items an AccessFunc is asked about.
const (
	ItemTool     = "tool"
	ItemResource = "resource" // a resource URI or a resource template
	ItemPrompt   = "prompt"
)

// MetaPrincipal is the _meta key under which a guest whose policy says so
// gets its caller: {"name": …, "scopes": […]}.
const MetaPrincipal = "wasmcp/principal"

// AccessFunc decides whether the caller of a request may list and use one
// item of a module: kind is ItemTool, ItemResource or ItemPrompt, name the
// tool or prompt name, the resource URI or the template. ctx is the
// request's context (an authentication layer keeps the caller there);
// principal is the request's principal. An item the caller may not use is
// absent from its lists and answers as an unknown item does.
type AccessFunc func(ctx context.Context, principal string, mod Module, kind, name string) bool

// GuestMetaFunc returns the JSON value the guest of mod gets in
// _meta["wasmcp/principal"] for the caller of a request, nil for none.
type GuestMetaFunc func(ctx context.Context, principal string, mod Module) []byte

// allowed reports whether the request's caller may use the item.
func (r *request) allowed(mod Module, kind, name string) bool {
	f := r.srv.opts.Access
	return f == nil || f(r.ctx, r.owner(), mod, kind, name)
}

// visible returns the indices of the n list items the caller may see (nil
// when every item is visible) and a digest of that set, which keys the
// encoded pages (item nil: a list of no module, all visible): a page
// encoded for one set of grants is served only to
// callers with the same set.
func (r *request) visible(n int, item func(int) (Module, string), kind string) ([]int, [32]byte) {
	if r.srv.opts.Access == nil || item == nil {
		return nil, [32]byte{}
	}
	idx := make([]int, 0, n)
	h := sha256.New()
	var buf [8]byte
	for i := 0; i < n; i++ {
		mod, name := item(i)
		if mod == nil || r.allowed(mod, kind, name) { // no module: the operator's, open
			idx = append(idx, i)
			binary.LittleEndian.PutUint64(buf[:], uint64(i))
			h.Write(buf[:])
		}
	}
	var d [32]byte
	if len(idx) == n {
		return nil, d // everything: the same pages as without grants
	}
	h.Write([]byte{0xff}) // distinguishes "all but filtered" from the zero key
	h.Sum(d[:0])
	return idx, d
}

// guestMeta returns the params for mod's guest: the client's keys with
// HostMetaPrefix removed from _meta (the host owns every one a guest
// sees; abi.MethodState stays only when the host put it there, in
// r.guestParams), and the caller in _meta[MetaPrincipal] when the
// server's GuestMeta says so. params without a host key and without a
// principal to add are returned as they are, undecoded.
func (r *request) guestMeta(mod Module, params []byte) []byte {
	keep := ""
	if r.guestParams != nil {
		keep = abi.MethodState
	}
	var v []byte
	if f := r.srv.opts.GuestMeta; f != nil {
		v = f(r.ctx, r.owner(), mod)
	}
	key := ""
	if v != nil {
		key = MetaPrincipal
	}
	p, err := hostMeta(params, keep, key, v)
	if err != nil {
		// Params that are not an object carry no _meta to forge; the
		// guest gets them as they are, without a principal.
		return params
	}
	return p
}

// CallRecord describes one finished guest call, for an audit log. It holds
// no argument values.
type CallRecord struct {
	// Principal is the caller, "" when none.
	Principal string
	// Module serves the call; Method is tools/call, resources/read,
	// prompts/get or completion/complete; Name is the tool or prompt name
	// or the resource URI.
	Module, Method, Name string
	// Outcome is "ok", "tool_error" (a result with isError), "error" (a
	// JSON-RPC error from the guest), "input_required", "canceled" or
	// "failed" (the guest trapped, exited or broke a limit).
	Outcome string
	// Duration is the guest's run time.
	Duration time.Duration
}

// AuditFunc receives a CallRecord per finished guest call.
type AuditFunc func(ctx context.Context, rec CallRecord)

// audit reports a finished guest call to the server's Audit.
func (r *request) audit(mod Module, method string, start time.Time, reply *contract.Reply, err error) {
	f := r.srv.opts.Audit
	if f == nil {
		return
	}
	rec := CallRecord{Principal: r.owner(), Module: mod.Name(), Method: method, Name: r.p.Name, Duration: time.Since(start)}
	if rec.Name == "" {
		rec.Name = r.p.URI
	}
	switch {
	case err != nil && (canceled(err) || errors.Is(err, tasks.ErrCanceledByClient)):
		// The client canceled the call, or the task (tasks/cancel).
		rec.Outcome = "canceled"
	case err != nil:
		rec.Outcome = "failed"
	case reply.Error != nil:
		rec.Outcome = "error"
	case len(reply.InputRequests) > 0:
		rec.Outcome = "input_required"
	default:
		rec.Outcome = string(resultOutcome(reply.Result))
	}
	f(r.ctx, rec)
}

// resourceAllowed reports whether the caller may use the resource at uri:
// true for a URI no module serves (it behaves as unknown either way).
func (r *request) resourceAllowed(uri string) bool {
	if r.srv.opts.Access == nil {
		return true
	}
	if e, ok := r.cat.resIdx[uri]; ok {
		return r.allowed(e.mod, ItemResource, uri)
	}
	if set := r.cat.skills; set != nil {
		if s, ok := set.file[canonicalSkillURI(uri)]; ok {
			return r.skillAllowed(s)
		}
	}
	if t := r.cat.templateFor(uri); t != nil {
		return r.allowed(t.mod, ItemResource, t.tmpl.URITemplate)
	}
	return true
}

// owner is the principal the request acts for, and so the principal a task
// of the request belongs to (only it may read, wait for or cancel the
// task): the one its transport named, else its session's.
func (r *request) owner() string {
	if r.hint.Principal == "" && r.sess != nil {
		return r.sess.Principal
	}
	return r.hint.Principal
}

// instructions are the server's instructions for the caller: the
// operator's, then the sections of the modules the caller may see — a
// module with an item (tool, resource, template, prompt or skill) the
// caller may use, or with no item at all. A module whose every item its
// grant hides from the caller is as absent from the instructions as from
// the lists. hidden reports whether some section was left out (the
// answer is then the caller's own, not a public one).
func (r *request) instructions() (text string, hidden bool) {
	c := r.cat
	if r.srv.opts.Access == nil || len(c.instrOf) == 0 {
		return c.Instructions(r.srv.opts.Instructions), false
	}
	var b strings.Builder
	for _, mi := range c.instrOf {
		if !r.seesModule(mi.mod) {
			hidden = true
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(mi.text)
	}
	if !hidden {
		return c.Instructions(r.srv.opts.Instructions), false
	}
	op := strings.TrimSpace(r.srv.opts.Instructions)
	switch {
	case b.Len() == 0:
		return op, true
	case op == "":
		return b.String(), true
	}
	return op + "\n\n" + b.String(), true
}

// seesModule reports whether the caller may use some item of mod, or mod
// has none.
func (r *request) seesModule(mod Module) bool {
	c := r.cat
	any := false
	for _, e := range c.tools {
		if e.mod == mod {
			if r.allowed(mod, ItemTool, e.tool.Name) {
				return true
			}
			any = true
		}
	}
	for _, e := range c.resources {
		if e.mod == mod {
			if r.allowed(mod, ItemResource, e.res.URI) {
				return true
			}
			any = true
		}
	}
	for _, e := range c.templates {
		if e.mod == mod {
			if r.allowed(mod, ItemResource, e.tmpl.URITemplate) {
				return true
			}
			any = true
		}
	}
	for _, e := range c.prompts {
		if e.mod == mod {
			if r.allowed(mod, ItemPrompt, e.prompt.Name) {
				return true
			}
			any = true
		}
	}
	return !any
}

// ScopeFunc returns the scopes any one of which would let the caller use
// an item Access hides from it (kind and name as for AccessFunc); nil when
// no scope would: the item is granted to named principals only, or the
// caller holds no credential that carries scopes (stdio, no --auth).
type ScopeFunc func(ctx context.Context, principal string, mod Module, kind, name string) []string

// InsufficientScope is the refusal of a call a scope the caller's
// credential lacks would allow (MCP step-up authorization): a transport
// with credentials answers it in its own terms (HTTP: 403 with
// WWW-Authenticate: Bearer error="insufficient_scope", scope="…").
type InsufficientScope struct {
	// Method and Name are the refused request's method and the item it
	// names.
	Method, Name string
	// Scopes are the scopes any one of which would allow the call.
	Scopes []string
}

func (e *InsufficientScope) Error() string {
	return "insufficient scope: " + e.Method + " " + e.Name + " needs one of the scopes " + strings.Join(e.Scopes, " ")
}

// hiddenTool answers a tools/call of a tool the caller may not use: as an
// unknown tool, unless a scope would allow it (Options.StepUp), when it
// is refused with an *InsufficientScope naming the scopes.
func (r *request) hiddenTool(e *toolEntry) Response {
	var scopes []string
	if f := r.srv.opts.StepUp; f != nil {
		scopes = f(r.ctx, r.owner(), e.mod, ItemTool, r.p.Name)
	}
	if len(scopes) == 0 {
		return r.fail(errorf(CodeInvalidParams, "Unknown tool: "+r.p.Name))
	}
	data, _ := sonic.Marshal(map[string]any{"scopes": scopes})
	resp := r.fail(&Error{Code: CodeInvalidParams,
		Message: "Insufficient scope: tool " + r.p.Name + " needs one of the scopes " + strings.Join(scopes, " "), Data: data})
	resp.Refusal = &InsufficientScope{Method: r.msg.Method, Name: r.p.Name, Scopes: scopes}
	return resp
}
