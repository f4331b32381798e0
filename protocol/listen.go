package protocol

import (
	"bytes"

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
