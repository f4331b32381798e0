package auth

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStepUpChallenge: in a request the Guard let through, StepUpChallenge
// is a Bearer insufficient_scope challenge naming the scopes and the
// resource metadata, and is logged as a refusal; outside one it is "".
func TestStepUpChallenge(t *testing.T) {
	var got string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = StepUpChallenge(r.Context(), []string{"admin", "ops"})
		_, _ = io.WriteString(w, "ok")
	})
	g, logs := newKeysGuard(t, GuardOptions{})
	g.next = h
	if w := do(g, http.MethodPost, "/mcp", "Bearer key-b"); w.Code != 200 {
		t.Fatalf("bob: %d %s", w.Code, w.Body)
	}
	for _, want := range []string{"Bearer ", `resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"`, `scope="admin ops"`, `error="insufficient_scope"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("challenge %q lacks %q", got, want)
		}
	}
	if !strings.Contains(logs.String(), `"error":"insufficient_scope"`) || strings.Contains(logs.String(), "key-b") {
		t.Fatalf("log: %s", logs)
	}
	if c := StepUpChallenge(context.Background(), []string{"admin"}); c != "" {
		t.Fatalf("without a guard: %q", c)
	}
}
