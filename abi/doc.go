// Package abi is the contract between the wasmcp host and its WebAssembly
// guests: the constants and the JSON types both sides share. The contract
// itself, written for someone implementing a guest in any language, is
// README.md in this directory.
//
// The package depends on the standard library only, so guests built with
// GOOS=wasip1 can import it.
package abi
