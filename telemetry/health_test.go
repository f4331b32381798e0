package telemetry

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func probe(h http.Handler) (int, string) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return w.Code, w.Body.String()
}

func TestReadiness(t *testing.T) {
	var h Health
	steps := []struct {
		do   func()
		code int
		want string
	}{
		{func() {}, 503, "catalog not loaded"},
		{func() { h.StoreOpen(true) }, 503, "catalog not loaded; listener not accepting"},
		{h.CatalogLoaded, 503, "listener not accepting"},
		{func() { h.Listening(true) }, 200, "ready"},
		{h.Draining, 503, "shutting down"},
	}
	for i, s := range steps {
		s.do()
		code, body := probe(h.Readyz())
		if code != s.code || !strings.Contains(body, s.want) {
			t.Fatalf("step %d: %d %q, want %d %q", i, code, body, s.code, s.want)
		}
	}
	if code, body := probe(h.Healthz()); code != 200 || body != "ok\n" {
		t.Fatalf("healthz: %d %q", code, body)
	}
}
