// Command mcpload is a load generator for MCP servers on Streamable HTTP.
// It drives one endpoint with C concurrent clients, each calling one tool
// with fixed JSON arguments over its own keep-alive connection, for a
// duration (or a number of requests), and reports throughput, latency
// percentiles, errors and, given the server's pid, the server's CPU time
// per call and its resident memory.
//
// Usage:
//
//	mcpload -url http://127.0.0.1:8080/mcp -tool word_count -args '{"text":"a b c"}' \
//	        [-c 8] [-d 10s | -n 10000] [-warmup 1s] [-era modern|legacy] [-pid PID] [-json]
//	        [-h2 | -http3] [-cacert CERT.pem]
//	mcpload -table RESULT.json...   print a side-by-side table of -json results
//
// HTTP versions: HTTP/1.1 by default; -h2 speaks HTTP/2 (by ALPN over
// https, with prior knowledge, h2c, over http); -http3 speaks HTTP/3 over
// QUIC to the URL's host and port on UDP (https only). Each client has its
// own connection in every version, so the versions are compared with the
// same number of connections; an answer in another version than asked is
// an error. -cacert names a certificate to trust, such as the one
// 'wasmcp cert' writes.
//
// Relay: with -relay HOST:PORT (loopback) and -http3 (or -h2), mcpload
// loads nothing; it serves plain HTTP/1.1 there for -d and forwards every
// request to -url over HTTP/3 (or HTTP/2) — headers, Host and Origin
// included, responses streamed and flushed per write — so that a client
// that speaks only HTTP/1.1, such as the official MCP conformance runner,
// runs its checks against the server's HTTP/3 side
// (CONFORMANCE_HTTP3=1 tests/conformance/run).
//
// Eras:
//   - modern (2026-07-28, stateless): every request carries the
//     MCP-Protocol-Version, Mcp-Method and Mcp-Name headers and the
//     protocol version and client capabilities in params._meta; there is no
//     handshake.
//   - legacy: each client sends initialize and notifications/initialized
//     once, then calls with the Mcp-Session-Id (when the server gave one)
//     and MCP-Protocol-Version headers; the session is deleted at the end.
//
// A call counts as an error when the HTTP status is not 2xx, the body is
// not a JSON-RPC response with the request's id, or it carries a JSON-RPC
// error; a result with isError true counts as a tool error. Latencies are
// measured from before the request is written to after the body is read.
// Requests started during the warm-up are not counted.
//
// The target must be a loopback address (127.0.0.0/8, ::1 or localhost):
// mcpload is a benchmark tool for servers on the same machine, bounded in
// time (at most 30 minutes) and stopping by itself.
package main
