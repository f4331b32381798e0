// Package mcphttp serves MCP over HTTP: Streamable HTTP on one endpoint
// (/mcp) for every revision from 2024-11-05 to 2026-07-28, deciding the era
// of each POST from its headers and body; optionally the 2024-11-05 HTTP+SSE
// pair (GET /sse, POST /messages); and a simple POST-only JSON mode.
//
// Era routing, per POST (the rule of the reference conformance server):
//   - a request with an Mcp-Session-Id header is legacy and belongs to that
//     session (404 when unknown or another principal's);
//   - otherwise it is modern (2026-07-28) when it has an MCP-Protocol-Version
//     header that is not a legacy revision, or when its params carry _meta;
//   - everything else is legacy: initialize mints a session, server/discover
//     needs none, any other request without a session is refused (400).
//
// A modern request is validated in this order: MCP-Protocol-Version header
// missing (400, -32020); _meta missing or incomplete (400, -32602); a header
// that disagrees with the body — MCP-Protocol-Version, Mcp-Method, Mcp-Name
// or an Mcp-Param-* header bound by an x-mcp-header annotation — (400,
// -32020); unsupported revision (400, -32022); a method this era does not
// have (404, -32601). The answer is a JSON body unless the server has
// something to send before it (progress, logs) and the client accepts
// text/event-stream, in which case the response switches to SSE at the first
// such message. Closing the response cancels the call. GET and DELETE
// without a session answer 405.
//
// A legacy session keeps the negotiated revision and capabilities; its
// POSTs answer JSON or SSE in the same lazy way, and requests to the client
// (sampling, elicitation, roots) travel on the POST's SSE stream, or on the
// session's GET stream when the POST's answer is plain JSON. SSE event ids
// name the stream and a sequence number; a bounded replay buffer serves
// Last-Event-ID. A GET whose Last-Event-ID names a POST's stream resumes
// that stream (its remaining events, up to the response, then the end); any
// other GET is the session's standalone stream, which never carries a
// response. A client disconnect is not a cancellation in this era:
// notifications/cancelled, DELETE and idle expiry are — except for a batch,
// whose remaining elements stop when its client goes away.
//
// Serve speaks HTTP/1.1 and HTTP/2 on TCP and, with Options.HTTP3, HTTP/3
// on the UDP port of the same number (quic-go), advertised to TCP clients
// with Alt-Svc; the handler is the same for all three.
//
// Every request passes a Host allow-list (against DNS rebinding; loopback
// names by default on a loopback bind) and an Origin check first: no
// browser origin but the server's own is allowed unless listed.
//
// What one client can hold is capped (limits.go, and each Options field):
// connections in total and per remote address (sized from the
// file-descriptor limit; QUIC connections under the same caps, counted
// apart, refused in their handshake), header and body sizes and read times, batch
// elements, sessions (past the cap an idle session of the principal
// holding the most is evicted, never one of a principal holding fewer; 503
// with Retry-After when none may be) and standalone SSE streams.
// Refusals are logged at warning level, at most once a second per kind.
package mcphttp
