// Package sdktest runs the tests of the Rust guest SDK (the Cargo crate in
// the parent directory, documented in its README.md). It has no Go API: its
// one test runs `cargo test` on the crate with Debian's Rust toolchain and
// crates, as CI installs them (.ci/run), natively on the host: the crate's
// unit tests, its serve-level tests (tests/serve.rs) and its doc example.
// The crate compiled to WebAssembly, through the host, is tested by
// tests/rustsdk_test.go with the reference tool set.
package sdktest
