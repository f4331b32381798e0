// Package server is what `wasmcp serve` does once its flags are parsed: it
// builds the engine, the task store, the protocol server, the registry of
// the tools directory and the operator's endpoints from a Config, then
// serves MCP on stdio or over HTTP (and HTTP/3) until its context ends.
//
// Run holds the start-up order: the engine, the metrics and tracing, the
// task store (a bbolt file, memory or a Redis store shared by replicas, whose
// announcements the fan-out carries), the protocol server with the access
// grants and the audit line, the pulled tools of a lock file, the registry
// and its watchers, the listeners (bound before the modules load, so a port
// in use is reported at once), then the initial load beside serving.
// Reload loads the tools directory again (the command calls it on SIGHUP).
//
// The command line (cmd/wasmcp) owns flags, the configuration file and
// signals; this package knows nothing of them.
package server
