// Package host runs wasmcp tool modules: it compiles WebAssembly modules once
// with wazero (with an on-disk compilation cache), learns what each module
// offers through the guest ABI (package abi), and runs every request in a
// fresh module instance under the module's limits.
//
// The host speaks the guest ABI — newline-delimited JSON-RPC on the guest's
// stdin and stdout — and nothing more: it does not know MCP revisions, eras,
// sessions or transports. A caller hands Module.Call one request and a
// contract.Peer that carries the guest's notifications and client requests
// outward; package contract is all the host shares with the MCP layer.
package host
