package telemetry

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// Health is the state the probes report. The process serves as long as it
// answers /healthz; it is ready (/readyz) once the catalog is loaded, the
// task store is open and the listener accepts, and until graceful shutdown
// begins. It is safe for concurrent use.
type Health struct {
	catalog   atomic.Bool
	store     atomic.Bool
	listening atomic.Bool
	draining  atomic.Bool
}

// CatalogLoaded records that the initial catalog is installed.
func (h *Health) CatalogLoaded() { h.catalog.Store(true) }

// StoreOpen records whether the task store is open.
func (h *Health) StoreOpen(open bool) { h.store.Store(open) }

// Listening records whether the listener accepts connections.
func (h *Health) Listening(on bool) { h.listening.Store(on) }

// Draining records that graceful shutdown began: not ready from then on.
func (h *Health) Draining() { h.draining.Store(true) }

// Ready reports whether the server is ready, and if not why.
func (h *Health) Ready() (bool, string) {
	var why []string
	if h.draining.Load() {
		why = append(why, "shutting down")
	}
	if !h.catalog.Load() {
		why = append(why, "catalog not loaded")
	}
	if !h.store.Load() {
		why = append(why, "task store not open")
	}
	if !h.listening.Load() {
		why = append(why, "listener not accepting")
	}
	return len(why) == 0, strings.Join(why, "; ")
}

// Healthz answers 200 "ok" while the process serves.
func (h *Health) Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, "ok")
	})
}

// Readyz answers 200 "ready" when the server is ready, else 503 with the
// reasons.
func (h *Health) Readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if ok, why := h.Ready(); !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready:", why)
			return
		}
		fmt.Fprintln(w, "ready")
	})
}
