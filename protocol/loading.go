package protocol

import (
	"context"
	"strings"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/skills"
)

// loading is the state of a server's initial load (StartLoading).
type loading struct {
	done     chan struct{} // closed when the load ends
	listWait time.Duration // longest a list request waits for done; 0: no bound
	initWait time.Duration // longest initialize and server/discover wait for done
}

// InitializeWait is the longest initialize and server/discover wait for
// the initial load (StartLoading): long enough that a start from warm
// caches (modules listed from their cached descriptions, in milliseconds)
// answers with every module's instructions and capabilities, short enough
// that a cold start (tens of seconds of compiling) never trips a client's
// start-up timeout.
const InitializeWait = 2 * time.Second

// StartLoading tells the server its initial load has begun: the catalog
// fills as modules finish loading, and until done is called
//
//   - a request naming a tool, prompt, resource, resource template or
//     completion reference (tools/call, prompts/get, resources/read,
//     completion/complete) that the current catalog does not have waits for
//     a catalog that has it, for the end of the load (then it is answered
//     as unknown) or for its own end, whichever comes first: a call waits
//     only for its own module;
//   - a list request (tools/list, resources/list, resources/templates/list,
//     prompts/list, skills/list, skills/get, resources/directory/read)
//     waits for the end of the load, at most listWait (0: no bound but
//     the request's own), then lists what is loaded by then (the rest
//     follows with list_changed);
//   - initialize and server/discover wait for the end of the load at most
//     InitializeWait (or listWait, when shorter), then answer with the
//     instructions and capabilities of what is loaded by then;
//   - everything else (ping, logging, tasks) is answered at once.
//
// done may be called more than once. With no load under way (StartLoading
// never called, or done called) nothing waits.
func (s *Server) StartLoading(listWait time.Duration) (done func()) {
	l := &loading{done: make(chan struct{}), listWait: listWait, initWait: InitializeWait}
	if listWait > 0 && listWait < l.initWait {
		l.initWait = listWait
	}
	s.loading.Store(l)
	var once bool
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if once {
			return
		}
		once = true
		close(l.done)
		s.loading.CompareAndSwap(l, nil)
	}
}

// InterruptLoading says the initial load was cut short because the server
// is shutting down (call it before StartLoading's done): from then on a
// request that waited for, or names, what the catalog does not have is
// answered with a shutdown error instead of as unknown.
func (s *Server) InterruptLoading() { s.loadCut.Store(true) }

// Loading reports whether the initial load is under way (see StartLoading).
func (s *Server) Loading() bool { return s.loading.Load() != nil }

// catalogChanged returns a channel closed at the next SetCatalog.
func (s *Server) catalogChanged() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.catSwap == nil {
		s.catSwap = make(chan struct{})
	}
	return s.catSwap
}

// listMethods wait for the end of the initial load (StartLoading).
var listMethods = map[string]bool{
	"tools/list": true, "resources/list": true, "resources/templates/list": true, "prompts/list": true,
	"skills/list": true, "skills/get": true, "resources/directory/read": true,
}

// itemMethods wait for a catalog that has what they name (StartLoading).
var itemMethods = map[string]bool{
	"tools/call": true, "prompts/get": true, "resources/read": true, "completion/complete": true,
}

// AwaitLoad holds msg while the initial load has not yet brought what it
// needs (see StartLoading), or until ctx ends. It returns at once when no
// load is under way. Handle calls it unless Hint.LoadWaited says the
// transport did.
func (s *Server) AwaitLoad(ctx context.Context, msg *Message) {
	l := s.loading.Load()
	if l == nil || msg.IsNotification() {
		return
	}
	switch {
	case listMethods[msg.Method], msg.Method == "initialize", msg.Method == "server/discover":
		wait := l.listWait
		if !listMethods[msg.Method] {
			wait = l.initWait
		}
		var bound <-chan time.Time
		if wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			bound = t.C
		}
		select {
		case <-l.done:
		case <-bound:
		case <-ctx.Done():
		}
	case itemMethods[msg.Method]:
		for {
			changed := s.catalogChanged()
			if s.names(msg) {
				return
			}
			select {
			case <-changed:
			case <-l.done:
				return
			case <-ctx.Done():
				return
			}
		}
	}
}

// names reports whether the current catalog has what msg names: the
// module serving it, or a skill file for resources/read.
func (s *Server) names(msg *Message) bool {
	if s.ModuleOf(msg) != "" {
		return true
	}
	if msg.Method != "resources/read" {
		return false
	}
	var p struct {
		URI string `json:"uri"`
	}
	if sonic.Unmarshal(msg.Params, &p) != nil || !strings.HasPrefix(p.URI, skills.Scheme+"://") {
		return false
	}
	c := s.cat.Load()
	if c == nil || c.skills == nil {
		return false
	}
	_, ok := c.skills.files[canonicalSkillURI(p.URI)]
	return ok
}

// AwaitsLoad reports whether Handle would hold msg for the initial load
// (StartLoading): a list request, or a request naming what the catalog
// does not have yet, while the load is under way. A transport that admits
// requests per module (ModuleOf) waits for these (AwaitLoad) before it
// admits them, so that they hold neither the host's admission nor a
// module's they may turn out not to belong to.
func (s *Server) AwaitsLoad(msg *Message) bool {
	if s.loading.Load() == nil || msg == nil || msg.IsNotification() {
		return false
	}
	return listMethods[msg.Method] || (itemMethods[msg.Method] && !s.names(msg))
}
