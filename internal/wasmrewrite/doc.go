// Package wasmrewrite reads and rewrites WebAssembly binaries, bytes in and
// bytes out, for the host: it knows the binary format (sections, LEB128
// numbers, instruction immediates) and nothing of wazero or of the guest
// ABI.
//
// binary.go is the small reader and writer every rewrite shares; each
// rewrite lives in a file of its own (interrupt.go: the deadline checks at
// loop headers). A rewrite is given modules wazero has already validated
// and refuses, with an error wrapping ErrUnsupported, anything it does not
// understand; the caller then uses the module as it is.
package wasmrewrite
