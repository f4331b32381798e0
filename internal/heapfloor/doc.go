// Package heapfloor keeps the Go garbage collector from running more often
// than a server with a small live heap needs.
//
// The collector's goal is the live heap times (1 + GOGC/100). A server whose
// live heap is a few MiB and that allocates a few KiB per request (wasmcp
// serving a C or Rust guest: a fresh instance, its call stack and the
// request's buffers) then collects every few hundred requests, and the
// collections' fixed costs (roots, stacks, the pacer, waking the background
// workers) become a sixth of its CPU. Go's own floor for the goal is 4 MiB.
//
// Start raises that floor: after every collection it sets the GC percentage
// so that the next goal leaves at least a given headroom above the live heap,
// and never less than the percentage the process started with. A process
// whose live heap is large (a Go reactor's snapshot memories, hundreds of
// MiB) keeps its percentage: the floor only matters while the headroom the
// percentage gives is smaller than the floor. GOMEMLIMIT still applies (the
// runtime collects at the memory limit whatever the percentage), and an
// operator who sets GOGC has chosen: the caller is expected not to start it
// then (see FromEnvironment).
//
// The cost is memory: up to the headroom more heap is resident between
// collections.
//
// StartCeiling is the other side: it keeps the runtime's soft memory limit
// at a target the caller computes (wasmcp serve: what its code and memory
// budgets hold, plus a margin), refreshed after every collection and never
// below the live heap plus a least room, so that a heap the budgets bound
// does not grow to twice that between collections.
package heapfloor
