// Package egress makes the outbound HTTP requests guests ask for
// (abi.MethodHTTP) on their behalf: it checks each request, and each
// redirect hop, against the module's allow-list, guards every connection
// against server-side request forgery after DNS resolution and at connect
// time, adds the policy's secret headers only for the destination they
// belong to, enforces the per-call limits, and writes one audit log line per
// request. It knows nothing of wazero or MCP.
package egress
