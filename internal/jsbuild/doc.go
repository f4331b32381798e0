// Package jsbuild gives wasmcp the two guests that script tools need: the
// JavaScript runner (guest-sdk/js/runner), which every call of a .js or
// .ts tool runs on, and the load-time TypeScript transform
// (guest-sdk/js/tsstrip), which strips a .ts file's types in a sandboxed
// instance when the file is loaded.
//
// Both are built from the repository's sources, never committed. Where
// their bytes come from, in order:
//
//  1. embedded in the binary: `go generate ./internal/jsbuild` (which `go
//     run ./examples/wasm/build` and CI run first) builds them into the
//     git-ignored directory embed/, gzip-compressed, with the hash of the
//     sources they were built from (source.sha256);
//     TestEmbeddedMatchesSource fails when that hash is not the hash of
//     the checkout's sources, and TestEmbeddedIsReproducible rebuilds
//     them and compares the bytes;
//  2. built on first use, when nothing is embedded, the working directory
//     is inside a wasmcp checkout and `go` is on PATH: into the user cache
//     directory, ~/.cache/wasmcp/js/<source hash>/, logged once;
//  3. otherwise an error that says how to get them.
//
// docs/design/scripts.md gives the reasons and the measured costs.
package jsbuild
