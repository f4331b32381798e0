package protocol

import (
	"bytes"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
)

// Listener receives the notifications that belong to no request: list
// changes and resource updates. A legacy session's stream (stdio, the HTTP
// GET stream) is one; a modern subscriptions/listen stream is another.
type Listener struct {
	// Session, when set, selects resources/updated for the URIs the
	// session subscribed to.
	Session *Session
	// Tools, Prompts and Resources select the list_changed kinds.
	Tools, Prompts, Resources bool
	// URIs selects resources/updated for these URIs.
	URIs map[string]bool
	// SubscriptionID, when set, is the raw id of the subscriptions/listen
	// request the listener serves; every notification then carries it in
	// params._meta (io.modelcontextprotocol/subscriptionId).
	SubscriptionID []byte
	// Tasks selects notifications/tasks for these task ids (modern
	// subscriptions/listen with taskIds), for tasks Principal owns.
	Tasks     map[string]bool
	Principal string
	// Send delivers one notification (a complete JSON-RPC message). It is
	// called from the goroutine that caused the notification and must not
	// block for long.
	Send func(msg []byte)

	// logLevel is the level a subscriptions/listen request asked for in
	// its _meta (levelNone without); a legacy stream uses its Session's.
	logLevel int
}

// Warn sends notifications/message at level warning, logger "wasmcp",
// with data, to every stream whose client asked for logs at warning or
// lower: a legacy session that called logging/setLevel, a
// subscriptions/listen stream whose request named a logLevel in _meta.
// The server's own news for the operator reaches the client this way
// (a module refused at load, a name lost to another module).
func (s *Server) Warn(data map[string]string) {
	body, err := sonic.ConfigStd.Marshal(struct { // ConfigStd: data's keys sorted
		Level  string            `json:"level"`
		Logger string            `json:"logger"`
		Data   map[string]string `json:"data"`
	}{"warning", "wasmcp", data})
	if err != nil {
		return
	}
	s.mu.Lock()
	ls := make([]*Listener, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		if l.wantsLog(levelWarning) {
			l.Send(l.message(abi.MethodLog, body))
		}
	}
}

// wantsLog reports whether the listener's client asked for logs at level.
func (l *Listener) wantsLog(level int) bool {
	if l.Session != nil {
		if !l.Session.Initialized() {
			return false
		}
		l.Session.mu.Lock()
		defer l.Session.mu.Unlock()
		return l.Session.logSet && l.Session.logLevel <= level
	}
	return l.SubscriptionID != nil && l.logLevel <= level
}

// AddListener registers l until the returned function is called.
func (s *Server) AddListener(l *Listener) (remove func()) {
	s.mu.Lock()
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}
}

// SetCatalog swaps the catalog and tells the listeners what changed.
func (s *Server) SetCatalog(c *Catalog) {
	old := s.cat.Swap(c)
	s.mu.Lock()
	if s.catSwap != nil {
		close(s.catSwap)
		s.catSwap = nil
	}
	s.mu.Unlock()
	tools := !bytes.Equal(digest(old, "tools"), digest(c, "tools"))
	prompts := !bytes.Equal(digest(old, "prompts"), digest(c, "prompts"))
	resources := !bytes.Equal(digest(old, "resources"), digest(c, "resources"))
	var updated []string
	for uri, e := range c.resIdx {
		if o, ok := old.resIdx[uri]; ok && o.mod != e.mod {
			updated = append(updated, uri)
		}
	}
	updated = append(updated, skillUpdates(old, c)...)
	if tools {
		s.broadcast(abi.MethodToolsListChanged, "")
	}
	if prompts {
		s.broadcast(abi.MethodPromptsListChanged, "")
	}
	if resources {
		s.broadcast(abi.MethodResourcesListChanged, "")
	}
	for _, uri := range updated {
		s.broadcast(abi.MethodResourceUpdated, uri)
	}
}

// digest is the encoded list of one kind, to compare two catalogs.
func digest(c *Catalog, kind string) []byte {
	var b []byte
	switch kind {
	case "tools":
		for _, e := range c.tools {
			b = append(b, e.enc[shapeFull]...)
		}
	case "prompts":
		for _, e := range c.prompts {
			b = append(b, e.enc...)
		}
	case "resources":
		for _, e := range c.resources {
			b = append(b, e.enc...)
		}
		for _, e := range c.templates {
			b = append(b, e.enc...)
		}
	}
	return b
}
