// Package cexamples holds the tests of the example tool modules written in
// C with the C guest SDK (guest-sdk/c). Each example lives in its own
// directory with its source, a build.sh and its built .wasm, committed so
// that a clone can serve and test it without a C toolchain. The tests load
// the committed modules through the host, compare them with their Go twins
// in examples/wasm, and, when clang-14 and wasi-libc are installed, rebuild
// them and check that the committed binaries are current.
package cexamples
