package server

import (
	"context"
	"testing"

	"github.com/wasmcp/wasmcp/auth"
)

// The memory budget's per-principal share names the caller auth
// authenticated (host.Config.Principal), "" for an anonymous call.
func TestBudgetPrincipalIsTheAuthPrincipal(t *testing.T) {
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{Name: "alice"})
	if got := principalName(ctx); got != "alice" {
		t.Errorf("principalName = %q, want alice", got)
	}
	if got := principalName(context.Background()); got != "" {
		t.Errorf("principalName of an anonymous call = %q", got)
	}
}
