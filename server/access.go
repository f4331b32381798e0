package server

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// grantedModule is what the grants need of a module; *host.Module has it.
type grantedModule interface {
	Access() *host.Access
}

// moduleAccess enforces the modules' [access] grants: the caller's scopes
// come from the authentication layer (none on stdio or without --auth,
// where only principals can match).
func moduleAccess(ctx context.Context, principal string, mod protocol.Module, kind, name string) bool {
	gm, ok := mod.(grantedModule)
	if !ok {
		return true
	}
	a := gm.Access()
	g := a.For(kind, name)
	if g.Open() {
		return true
	}
	var scopes []string
	if p := auth.FromContext(ctx); p != nil {
		scopes = p.Scopes
	}
	return g.Allows(principal, scopes)
}

// moduleStepUp names the scopes that would let an authenticated caller
// use an item its module's grant hides from it: the grant's scopes. None
// when the grant names principals only (no scope would help: the item
// stays unknown) or when the caller holds no credential with scopes
// (stdio, --auth none).
func moduleStepUp(ctx context.Context, principal string, mod protocol.Module, kind, name string) []string {
	gm, ok := mod.(grantedModule)
	if !ok || auth.FromContext(ctx) == nil {
		return nil
	}
	return gm.Access().For(kind, name).Scopes
}

// guestPrincipal gives a guest whose policy sets expose_principal its
// caller's name and scopes; never a credential.
func guestPrincipal(ctx context.Context, principal string, mod protocol.Module) []byte {
	gm, ok := mod.(grantedModule)
	if !ok || !gm.Access().ExposePrincipal {
		return nil
	}
	v := struct {
		Name   string   `json:"name"`
		Scopes []string `json:"scopes"`
	}{Name: principal, Scopes: []string{}}
	if p := auth.FromContext(ctx); p != nil && p.Scopes != nil {
		v.Scopes = p.Scopes
	}
	b, _ := json.Marshal(v)
	return b
}

// auditCalls writes one log line per guest call: who, what, the outcome
// and the duration; never arguments.
func auditCalls(log *slog.Logger) protocol.AuditFunc {
	return func(ctx context.Context, rec protocol.CallRecord) {
		// LogAttrs: typed attributes, no boxing of each value into an any.
		log.LogAttrs(ctx, slog.LevelInfo, "call", slog.String("audit", "call"), slog.String("principal", rec.Principal),
			slog.String("module", rec.Module), slog.String("method", rec.Method), slog.String("name", rec.Name),
			slog.String("outcome", rec.Outcome), slog.Duration("duration", rec.Duration))
	}
}
