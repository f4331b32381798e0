// Package contract is what the MCP layer (package protocol) and the module
// runner (package host) agree on, and nothing else: the Peer a running guest
// talks outward through, the Reply it ends with, the input requests a guest
// leaves to the client's retry, and the compiled schemas of a tool.
//
// Both sides import it; neither imports the other, so protocol and the
// transports build without wazero (checked by deps_test.go at the root of the
// module). What a guest sees on its stdin and stdout — method names, the
// JSON-RPC error object, error codes — is package abi; this package adds
// only the Go-side interfaces a guest never sees.
package contract
