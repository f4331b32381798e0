// Package limiter is the one contract of the per-key counters of wasmcp:
// places held at once under a cap (Acquire, Hold) and events in a time
// window (Allow). The task manager counts its task caps with it and the
// auth guard its per-principal caps; package replica implements it over
// Redis so that every replica counts together, and Local counts in this
// process.
//
// It is a leaf: it imports nothing of the project.
package limiter
