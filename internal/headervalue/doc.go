// Package headervalue is the codec of the values of the Mcp-Name and
// Mcp-Param-* HTTP headers (MCP 2026-07-28, "Value Encoding"): a value is
// sent as is when it is plain visible ASCII, else as
// =?base64?<standard Base64>?=. The server's HTTP transport
// (transport/mcphttp) decodes them and the load generator (cmd/mcpload)
// encodes them; neither has to link the other.
//
// It is a leaf: it imports nothing of the project.
package headervalue
