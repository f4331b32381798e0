// Package hostile is the hostile-guest battery: guests written to misbehave
// (guests/*.wat, built with wat2wasm and committed beside their sources,
// and Go guests in guests/*/) run through `wasmcp serve` over stdio and
// over HTTP, and the client must get a clear error naming the module and
// the cause while the server keeps serving and calls to other modules
// succeed. TestNoLeaksAfter1000HostileCalls checks the host's goroutines
// and heap return to their baseline after a thousand such calls.
// TestLoadTimeWalls serves modules over each structural cap (generated in
// walls_test.go) and TestRecursionWithinTheBudget recursions under a small
// --memory-budget, each with the server's peak RSS (/proc) and its return
// to idle CPU checked.
//
// Run it with the rest: go test -race ./tests/hostile
package hostile
