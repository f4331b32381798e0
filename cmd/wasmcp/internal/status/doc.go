// Package status is `wasmcp status`: a running server's modules, tools,
// calls, errors and queue depths, read from its /metrics and /readyz and
// printed as a table.
package status
