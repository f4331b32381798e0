// Package telemetry is what an operator sees of a running server: Prometheus
// metrics (Metrics, which implements protocol.Observer and
// registry.Observer) and the health and readiness probes (Health).
//
// It only observes: the request path calls its hooks when, and only when,
// they are installed, and nothing in it is read back by the server.
package telemetry
