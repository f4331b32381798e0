package mcphttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/wasmcp/wasmcp/protocol"
)

func TestExtraRoutes(t *testing.T) {
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") })
	h := New(protocol.NewServer(protocol.Options{}), Options{Addr: "127.0.0.1:8080",
		ExtraRoutes: map[string]http.Handler{"/metrics": hello, "/healthz": hello, "/mcp": hello}})
	defer h.Close()
	if got, want := h.Routes(), []string{"/mcp", "/healthz", "/metrics"}; !slices.Equal(got, want) {
		t.Fatalf("Routes() = %v, want %v", got, want)
	}
	do := func(path, host string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	if code, body := do("/metrics", "127.0.0.1:8080"); code != 200 || body != "hello" {
		t.Fatalf("/metrics: %d %q", code, body)
	}
	// /mcp cannot be replaced; the Host check applies to extra routes too.
	if code, body := do("/mcp", "127.0.0.1:8080"); code == 200 && body == "hello" {
		t.Fatal("an extra route replaced /mcp")
	}
	if code, _ := do("/metrics", "evil.example:8080"); code != http.StatusForbidden {
		t.Fatalf("/metrics with a foreign Host: %d, want 403", code)
	}
	if code, _ := do("/other", "127.0.0.1:8080"); code != http.StatusNotFound {
		t.Fatalf("/other: %d", code)
	}
	if st := h.Stats(); st != (Stats{}) {
		t.Fatalf("Stats() of an idle handler = %+v", st)
	}
}
