// Package transport holds wasmcp's MCP transports: stdio (package
// transport/stdio) and HTTP (package transport/mcphttp). A transport moves
// bytes and knows sessions, streams and headers; it hands every message to
// a protocol.Server and knows nothing of WebAssembly.
package transport
