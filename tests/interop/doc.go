// Package interop holds wasmcp's interoperability tests: the official MCP
// client SDKs — the TypeScript SDK (@modelcontextprotocol/sdk, driven by
// the Node script in ts/) and the Go SDK (github.com/modelcontextprotocol/go-sdk)
// — talk to a real `wasmcp serve` process serving the example tools of
// examples/wasm, over stdio, Streamable HTTP and the 2024-11-05 HTTP+SSE
// transport (--legacy-sse), in the legacy (initialize and session) era
// and, for the Go SDK, the stateless 2026-07-28 era. Each client lists
// the tools, calls one with arguments, receives its progress notifications
// and answers an elicitation. The TypeScript client also has a tools/call
// stream cut after its first message and resumes it with Last-Event-ID
// (ts/resume.mjs, TestTypeScriptSDKResumesAStream).
//
// TestMain builds the wasmcp command and the example guests once per test
// binary. The TypeScript tests need Node.js 18 or newer and npm; they run
// `npm ci` in ts/ when its node_modules is missing or stale, so the npm
// registry must be reachable the first time.
package interop
