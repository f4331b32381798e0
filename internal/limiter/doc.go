// Package limiter is the one contract of the per-key counters of wasmcp:
// places held at once under a cap (Acquire, Hold) and events in a time
// window (Allow). The task manager counts its task caps with it and the
// auth guard its per-principal caps, across replicas: package replica
// implements it over Redis. (In one process each counts by itself: the
// Manager under its lock, the guard with token buckets.) Package
// limitertest checks an implementation against the contract.
//
// It is a leaf: it imports nothing of the project.
package limiter
