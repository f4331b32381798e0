// Package check is `wasmcp check`: a conformance check of one guest module
// for its author. It loads nothing itself: it takes a module loaded as
// `wasmcp serve` loads it (host.Engine, the module's policy) and serves it
// through a protocol.Server in the process, as a client would see it, while
// watching what the guest itself writes (through a recording wrapper of the
// module). It checks the description, calls every tool with arguments
// generated from its input schema (gen.go) and with arguments the schema
// refuses, reads the resources and templates and gets the prompts (with
// values from the module's completions when it offers them), answers the
// guest's requests to the client with canned refusals, runs the guest with
// its stdin closed, and reports one line per check.
package check
