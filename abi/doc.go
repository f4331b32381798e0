// Package abi is the contract between the wasmcp host and its WebAssembly
// guests: the constants and the JSON types both sides share. The contract
// itself, written for someone implementing a guest in any language, is
// README.md in this directory.
//
// abi is a Go module of its own, github.com/wasmcp/wasmcp/abi, that
// depends on the standard library only: the guest SDK
// (github.com/wasmcp/wasmcp/guest-sdk/go) requires it, so it is in every
// Go tool's module graph and must bring nothing of the host with it, and
// guests built with GOOS=wasip1 compile it. It cannot import any package of
// the wasmcp module.
package abi
