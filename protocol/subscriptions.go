package protocol

import (
	"bytes"
	"context"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
)

// listenQueue is how many notifications a subscriptions/listen stream may
// have waiting to be written; past it, new ones are dropped.
const listenQueue = 256

// CloseSubscriptions ends every open subscriptions/listen stream
// gracefully: each listen request is answered with its completion result
// (resultType complete, the subscriptionId in _meta), and later listens are
// answered so right after their acknowledgement. Transports call it when
// they shut down.
func (s *Server) CloseSubscriptions() {
	s.subsOnce.Do(func() { close(s.subsDone) })
}

// listenFilter is the params.notifications of subscriptions/listen.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged"`
	PromptsListChanged    bool     `json:"promptsListChanged"`
	ResourcesListChanged  bool     `json:"resourcesListChanged"`
	ResourceSubscriptions []string `json:"resourceSubscriptions"`
	TaskIDs               []string `json:"taskIds"` // tasks extension
}

// honoured is the filter as acknowledged: only what the server delivers.
func (f *listenFilter) honoured() []byte {
	b := []byte{'{'}
	add := func(name string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":true`...)
	}
	if f.ToolsListChanged {
		add("toolsListChanged")
	}
	if f.PromptsListChanged {
		add("promptsListChanged")
	}
	if f.ResourcesListChanged {
		add("resourcesListChanged")
	}
	if len(f.ResourceSubscriptions) > 0 {
		if len(b) > 1 {
			b = append(b, ',')
		}
		uris, _ := sonic.Marshal(f.ResourceSubscriptions)
		b = append(b, `"resourceSubscriptions":`...)
		b = append(b, uris...)
	}
	if len(f.TaskIDs) > 0 {
		if len(b) > 1 {
			b = append(b, ',')
		}
		ids, _ := sonic.Marshal(f.TaskIDs)
		b = append(b, `"taskIds":`...)
		b = append(b, ids...)
	}
	return append(b, '}')
}

// listen serves subscriptions/listen: it acknowledges the subscription on
// the request's stream, then writes the notifications the filter selects,
// each tagged with the subscription id, until the client goes away (ctx,
// or notifications/cancelled on a stdio session) or the server closes its
// subscriptions.
func (r *request) listen() Response {
	if r.stream == nil {
		return r.fail(errorf(CodeMethodNotFound, "subscriptions/listen needs a transport that can stream"))
	}
	var f listenFilter
	if n := bytes.TrimSpace(r.p.Notifications); len(n) > 0 && string(n) != "null" {
		if n[0] != '{' || sonic.Unmarshal(n, &f) != nil {
			return r.fail(errorf(CodeInvalidParams, "Invalid params: notifications"))
		}
	}
	uris := make(map[string]bool, len(f.ResourceSubscriptions))
	for _, u := range f.ResourceSubscriptions {
		// A resource the caller may not use is subscribed to as an
		// unknown one is: accepted, and never notified.
		if r.resourceAllowed(u) {
			uris[u] = true
		}
	}
	var taskIDs map[string]bool
	if !r.caps.Tasks {
		f.TaskIDs = nil // only a client that declared the tasks extension
	}
	if len(f.TaskIDs) > 0 {
		taskIDs = make(map[string]bool, len(f.TaskIDs))
		for _, id := range f.TaskIDs {
			taskIDs[id] = true
		}
	}
	ctx, cancel := context.WithCancelCause(r.ctx)
	defer cancel(nil)
	if r.sess != nil {
		defer r.sess.track(r.msg.ID, cancel)()
	}
	queue := make(chan []byte, listenQueue)
	l := &Listener{
		Tools: f.ToolsListChanged, Prompts: f.PromptsListChanged, Resources: f.ResourcesListChanged,
		URIs: uris, SubscriptionID: r.msg.ID, Tasks: taskIDs, Principal: r.owner(), logLevel: r.logLevel,
		Send: func(msg []byte) {
			select {
			case queue <- msg:
			default:
				r.srv.log.Warn("subscriptions/listen stream too slow; notification dropped", "id", string(r.msg.ID))
			}
		},
	}
	remove := r.srv.AddListener(l)
	defer remove()

	ack := make([]byte, 0, 128)
	ack = append(ack, `{"_meta":{"`+MetaSubscriptionID+`":`...)
	ack = append(ack, r.msg.ID...)
	ack = append(ack, `},"notifications":`...)
	ack = append(ack, f.honoured()...)
	ack = append(ack, '}')
	if err := r.stream.Send(ctx, Notification("notifications/subscriptions/acknowledged", ack)); err != nil {
		return Response{Era: r.era}
	}
	var sessEnd <-chan struct{} // nil (never ready) without a session
	if r.sess != nil {
		sessEnd = r.sess.listensDone
	}
	for {
		select {
		case msg := <-queue:
			if err := r.stream.Send(ctx, msg); err != nil {
				return Response{Era: r.era}
			}
		case <-ctx.Done():
			return Response{Era: r.era}
		case <-r.srv.subsDone:
			return r.listenEnd()
		case <-sessEnd:
			return r.listenEnd()
		}
	}
}

// listenEnd is the graceful end of a subscriptions/listen: its result, with
// the subscription id in _meta.
func (r *request) listenEnd() Response {
	res := make([]byte, 0, 128)
	res = append(res, `{"resultType":"complete","_meta":{"`+MetaSubscriptionID+`":`...)
	res = append(res, r.msg.ID...)
	res = append(res, `,"`+MetaServerInfo+`":`...)
	res = append(res, r.srv.serverInfo...)
	res = append(res, `}}`...)
	return Response{Body: ResultResponse(r.msg.ID, res), Era: r.era}
}

// wants reports whether the listener selects a notification; uri is the
// resource of a resources/updated.
func (l *Listener) wants(method, uri string) bool {
	if l.Session != nil && !l.Session.Initialized() {
		return false // no notifications before the handshake
	}
	switch method {
	case abi.MethodToolsListChanged:
		return l.Tools
	case abi.MethodPromptsListChanged:
		return l.Prompts
	case abi.MethodResourcesListChanged:
		return l.Resources
	case abi.MethodResourceUpdated:
		return l.URIs[uri] || (l.Session != nil && l.Session.Subscribed(uri))
	}
	return false
}

// message builds a notification for the listener: with the subscription
// id in params._meta when the listener is a subscriptions/listen stream.
// params is nil or an object without _meta.
func (l *Listener) message(method string, params []byte) []byte {
	if l.SubscriptionID == nil {
		return Notification(method, params)
	}
	p := make([]byte, 0, 64+len(params))
	p = append(p, `{"_meta":{"`+MetaSubscriptionID+`":`...)
	p = append(p, l.SubscriptionID...)
	p = append(p, '}')
	if rest := bytes.TrimSpace(params); len(rest) > 1 && rest[0] == '{' {
		if inner := bytes.TrimSpace(rest[1:]); len(inner) > 0 && inner[0] != '}' {
			p = append(p, ',')
		}
		p = append(p, bytes.TrimSpace(rest[1:])...)
	} else {
		p = append(p, '}')
	}
	return Notification(method, p)
}

// broadcast sends a list change or resource update to every listener that
// selects it. uri is the resource of a resources/updated, "" otherwise.
func (s *Server) broadcast(method, uri string) {
	var params []byte
	if method == abi.MethodResourceUpdated {
		params = append(append([]byte(`{"uri":`), mustString(uri)...), '}')
	}
	s.mu.Lock()
	ls := make([]*Listener, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		if l.wants(method, uri) {
			l.Send(l.message(method, params))
		}
	}
}

func mustString(s string) []byte { return appendString(nil, s) }

// guestNotify broadcasts a list change or resource update a guest sent
// during a call. A guest may announce updates only of resources it serves.
func (p *peer) guestNotify(method string, params []byte) {
	r := p.r
	if method != abi.MethodResourceUpdated {
		r.srv.announce(method, "")
		return
	}
	var u struct {
		URI string `json:"uri"`
	}
	if sonic.Unmarshal(params, &u) != nil || u.URI == "" {
		return
	}
	if !r.cat.serves(p.mod, u.URI) {
		r.srv.log.Debug("guest announced an update of a resource it does not serve; dropped", "uri", u.URI)
		return
	}
	r.srv.announce(method, u.URI)
}

// announce broadcasts a guest's announcement here and, through the
// Fanout, on the other replicas.
func (s *Server) announce(method, uri string) {
	s.broadcast(method, uri)
	if s.opts.Fanout != nil {
		s.opts.Fanout.Publish(method, uri)
	}
}

// Broadcast delivers a list change or resource update another replica's
// guest announced (see Options.Fanout) to the listeners here that asked
// for it. Other methods are ignored.
func (s *Server) Broadcast(method, uri string) {
	switch method {
	case abi.MethodToolsListChanged, abi.MethodPromptsListChanged, abi.MethodResourcesListChanged:
		s.broadcast(method, "")
	case abi.MethodResourceUpdated:
		if uri != "" {
			s.broadcast(method, uri)
		}
	}
}

// serves reports whether mod serves uri, directly or through the
// template reads of it go to (templateFor).
func (c *Catalog) serves(mod Module, uri string) bool {
	if mod == nil {
		return false
	}
	if e, ok := c.resIdx[uri]; ok {
		return e.mod == mod
	}
	t := c.templateFor(uri)
	return t != nil && t.mod == mod
}
