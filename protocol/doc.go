// Package protocol is wasmcp's JSON-RPC 2.0 and MCP layer: envelope checks,
// the revisions from 2024-11-05 to 2026-07-28 and the era each request
// belongs to, the catalog of tools, resources and prompts built from the
// loaded modules, and one handler per MCP method.
//
// It knows nothing of HTTP or stdio. A transport decodes nothing itself: it
// hands each message to Server.Handle with the Session it belongs to (nil in
// the modern era) and a Stream on which messages related to the request
// (progress, logs, server-to-client requests) can be sent, and writes back
// the Response it gets.
package protocol
