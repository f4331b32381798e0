package server

import (
	"context"
	"testing"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// grantedMod is a module with [access] grants; plainMod has none (a
// module kind without grants).
type grantedMod struct {
	protocol.Module
	access host.Access
}

func (m *grantedMod) Access() *host.Access { return &m.access }

type plainMod struct{ protocol.Module }

// TestModuleAccess: the grants of a module's policy decide who may use
// each item, by the caller's scopes (from auth) or its principal; an
// item's own grant replaces the module's; no grant opens the item.
func TestModuleAccess(t *testing.T) {
	mod := &grantedMod{access: host.Access{
		Grant: host.Grant{Scopes: []string{"tools:read"}},
		Tools: map[string]host.Grant{"admin": {Principals: []string{"root"}}, "open": {}},
	}}
	with := func(name string, scopes ...string) context.Context {
		return auth.WithPrincipal(context.Background(), &auth.Principal{Name: name, Scopes: scopes})
	}
	for _, c := range []struct {
		ctx       context.Context
		principal string
		mod       protocol.Module
		kind      string
		name      string
		want      bool
	}{
		{with("alice", "tools:read"), "alice", mod, "tool", "echo", true},
		{with("bob"), "bob", mod, "tool", "echo", false},
		{with("bob", "tools:write"), "bob", mod, "prompt", "p", false},
		{context.Background(), "local", mod, "tool", "echo", false}, // stdio: no scopes
		{with("alice", "tools:read"), "alice", mod, "tool", "admin", false},
		{with("root"), "root", mod, "tool", "admin", true},
		{context.Background(), "root", mod, "tool", "admin", true}, // a principal matches without a credential
		{context.Background(), "", mod, "tool", "open", true},
		{context.Background(), "", &plainMod{}, "tool", "echo", true},
		{context.Background(), "", &grantedMod{}, "resource", "file:///x", true},
	} {
		if got := moduleAccess(c.ctx, c.principal, c.mod, c.kind, c.name); got != c.want {
			t.Errorf("%s %+v %s/%s: %v, want %v", c.principal, auth.FromContext(c.ctx), c.kind, c.name, got, c.want)
		}
	}
}

// TestModuleStepUp: a hidden item names the scopes of its grant to an
// authenticated caller only, and none when the grant names principals.
func TestModuleStepUp(t *testing.T) {
	mod := &grantedMod{access: host.Access{
		Grant: host.Grant{Scopes: []string{"tools:read"}},
		Tools: map[string]host.Grant{"admin": {Principals: []string{"root"}}},
	}}
	authed := auth.WithPrincipal(context.Background(), &auth.Principal{Name: "bob"})
	if got := moduleStepUp(authed, "bob", mod, "tool", "echo"); len(got) != 1 || got[0] != "tools:read" {
		t.Errorf("step-up scopes %q", got)
	}
	if got := moduleStepUp(authed, "bob", mod, "tool", "admin"); len(got) != 0 {
		t.Errorf("a principals-only grant named scopes %q", got)
	}
	if got := moduleStepUp(context.Background(), "local", mod, "tool", "echo"); got != nil {
		t.Errorf("stdio caller got step-up scopes %q", got)
	}
	if got := moduleStepUp(authed, "bob", &plainMod{}, "tool", "echo"); got != nil {
		t.Errorf("module without grants: %q", got)
	}
}

// TestGuestPrincipal: a guest sees its caller's name and scopes only when
// its policy sets expose_principal, and never more than those.
func TestGuestPrincipal(t *testing.T) {
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{Name: "alice", Scopes: []string{"a", "b"}})
	if got := guestPrincipal(ctx, "alice", &grantedMod{}); got != nil {
		t.Errorf("exposed without expose_principal: %s", got)
	}
	exposed := &grantedMod{access: host.Access{ExposePrincipal: true}}
	if got := string(guestPrincipal(ctx, "alice", exposed)); got != `{"name":"alice","scopes":["a","b"]}` {
		t.Errorf("exposed %s", got)
	}
	if got := string(guestPrincipal(context.Background(), "local", exposed)); got != `{"name":"local","scopes":[]}` {
		t.Errorf("stdio caller exposed as %s", got)
	}
	if got := guestPrincipal(ctx, "alice", &plainMod{}); got != nil {
		t.Errorf("module without grants: %s", got)
	}
}
