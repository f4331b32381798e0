// Package tests holds wasmcp's end-to-end tests. They build the wasmcp
// command once per test binary (TestMain in main_test.go) and run it as a
// separate process, talking to it the way a client does: JSON-RPC lines on
// its stdin and stdout, or HTTP.
package tests
