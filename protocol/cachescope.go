package protocol

import "context"

// cacheHint is what a modern result says about caching it (2026-07-28,
// SEP-2549): nothing, or ttlMs with a cacheScope.
//
// The rule: an answer is "public" — a shared cache may serve it to anyone
// — only when every principal would get the same one. That is decided by
// asking for the caller nobody is (no principal, no scopes, no session):
// an answer is public when that caller would see everything the answer
// holds and the guest answering it is not told who asks. Grants only ever
// add what a caller may see (a principal or a scope lets it in), so what
// nobody is shown is shown to everyone. Otherwise it is "private": a list
// some grant filters, even for a caller who sees all of it; a resource or
// skill a grant restricts, even to a caller it allows; the answer of a
// guest that gets _meta["wasmcp/principal"]; instructions some caller
// would not be given.
type cacheHint uint8

const (
	noCache      cacheHint = iota // no ttlMs, no cacheScope
	cachePublic                   // any principal gets the same answer
	cachePrivate                  // the answer is the caller's own
)

// member is c as the cache members of a result, ending with a comma.
func (c cacheHint) member() string {
	if c == cachePrivate {
		return `,"cacheScope":"private",`
	}
	return `,"cacheScope":"public",`
}

// value is c's cacheScope as JSON.
func (c cacheHint) value() string {
	if c == cachePrivate {
		return `"private"`
	}
	return `"public"`
}

// nobody is the request as the caller nobody is would make it: no
// principal, no credential in its context, no session.
func (r *request) nobody() *request {
	n := *r
	n.ctx = context.Background()
	n.hint.Principal = ""
	n.sess = nil
	return &n
}

// itemScope is the cache hint of an answer about one item of mod (nil:
// the operator's, open to all): public when the caller nobody is may use
// it and mod's guest is not told who asks.
func (r *request) itemScope(mod Module, kind, name string) cacheHint {
	if mod == nil {
		return cachePublic
	}
	if f := r.srv.opts.Access; f != nil && !f(context.Background(), "", mod, kind, name) {
		return cachePrivate
	}
	if f := r.srv.opts.GuestMeta; f != nil && f(context.Background(), "", mod) != nil {
		return cachePrivate
	}
	return cachePublic
}

// listScope is the cache hint of a list page of n items: private when the
// caller's view is filtered, or when some item is one the caller nobody
// is may not see (another caller would get another list).
func (r *request) listScope(filtered bool, n int, item func(int) (Module, string), kind string) cacheHint {
	if filtered {
		return cachePrivate
	}
	if r.srv.opts.Access == nil || item == nil {
		return cachePublic
	}
	for i := 0; i < n; i++ {
		mod, name := item(i)
		if mod != nil && !r.srv.opts.Access(context.Background(), "", mod, kind, name) {
			return cachePrivate
		}
	}
	return cachePublic
}
