// Package sdktest holds the tests of the C guest SDK (wasmcp.h and wasmcp.c
// in the parent directory, documented in its README.md). It has no Go API:
// the tests compile the SDK natively with the system's C compiler (cc) and
// run its JSON unit tests (testdata/json_test.c) and a test tool
// (testdata/tool.c) driven by request lines. The SDK's path through the
// host, compiled to WebAssembly, is tested with examples/c.
package sdktest
