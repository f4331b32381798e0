package registry

import (
	"strings"
	"time"
)

// Observer receives the registry's load events, for metrics. Its methods
// are called under the registry's load lock and must be quick.
type Observer interface {
	// ModuleLoaded reports a module compiled and described: its name, the
	// time the load took and the size of its WebAssembly binary.
	ModuleLoaded(module string, took time.Duration, wasmBytes int)
	// ModuleRefused reports a file that was not loaded.
	ModuleRefused()
	// CatalogPublished reports a new catalog installed (the initial one and
	// every reload that changed something).
	CatalogPublished()
}

// RetryObserver is an Observer that also hears of files whose load a busy
// machine cut: retrying true when a retry is scheduled, false when the file
// loaded, was refused or is gone.
type RetryObserver interface {
	ModuleRetrying(module string, retrying bool)
}

// RefusalObserver is an Observer that also hears which files are not
// served as they are now and why (a load error, a name another module
// serves): refused false when the file loads, is served or is gone.
type RefusalObserver interface {
	ModuleRefusedNow(module, reason string, refused bool)
}

// maxReasonLabel bounds the reason a RefusalObserver is given.
const maxReasonLabel = 300

// refusedNow tells the observer, if it listens, of file's state.
func (r *Registry) refusedNow(file, reason string, refused bool) {
	r.syncMu.Lock()
	obs := r.observer
	r.syncMu.Unlock()
	if ro, ok := obs.(RefusalObserver); ok {
		if len(reason) > maxReasonLabel {
			reason = strings.ToValidUTF8(reason[:maxReasonLabel], "") + "…"
		}
		ro.ModuleRefusedNow(file, reason, refused)
	}
}

// SetObserver sets the registry's observer; call it before Load.
func (r *Registry) SetObserver(o Observer) {
	r.syncMu.Lock()
	r.observer = o
	r.syncMu.Unlock()
}
