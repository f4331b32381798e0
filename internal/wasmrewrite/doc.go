// Package wasmrewrite reads, checks and rewrites WebAssembly binaries,
// bytes in and bytes out, for the host: it knows the binary format
// (sections, LEB128 numbers, instruction immediates) and nothing of the
// guest ABI. Its tests use wazero as the reference validator; the package
// itself does not import it.
//
// binary.go and instr.go are the small reader and writer every pass
// shares; each pass lives in a file of its own:
//
//   - check.go: Check, the structural limits a module must fit before an
//     engine decodes or compiles it (Caps, DefaultCaps);
//   - tables.go: ClampTables, which bounds the elements of a module's
//     tables;
//   - interrupt.go: Instrument, the deadline checks at loop headers;
//   - snapshot.go: ExportGlobals and Snapshot, which make an instance's
//     state after its start-up a module's initial state.
//
// The host runs Check, then ClampTables (which only lowers table maximums,
// so it cannot make an invalid module valid), then has wazero validate
// the result, and only then runs Instrument. A rewrite refuses, with an
// error wrapping ErrUnsupported, anything it does not understand; the
// host then uses the module as it is (for Instrument) or refuses it.
package wasmrewrite
