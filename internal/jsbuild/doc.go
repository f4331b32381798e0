// Package jsbuild gives wasmcp the guest that script tools need: the
// JavaScript runner (guest-sdk/js/runner), which every call of a .js or
// .ts tool runs on. (TypeScript is turned into JavaScript by the host, at
// load: internal/tstransform.)
//
// The runner is built from the repository's sources, never committed.
// Where its bytes come from, in order:
//
//  1. embedded in the binary: `go generate ./internal/jsbuild` (which `go
//     run ./examples/wasm/build` and CI run first) builds it into the
//     git-ignored directory embed/, gzip-compressed, with the hash of the
//     sources it was built from (source.sha256);
//     TestEmbeddedMatchesSource fails when that hash is not the hash of
//     the checkout's sources, and TestEmbeddedIsReproducible rebuilds it
//     and compares the bytes;
//  2. built on first use, when nothing is embedded, the working directory
//     is inside a wasmcp checkout and `go` is on PATH: into the user cache
//     directory, ~/.cache/wasmcp/js/<source hash>/, logged once;
//  3. otherwise an error that says how to get it.
//
// docs/design/scripts.md gives the reasons and the measured costs.
package jsbuild
