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
//
// In the 2026-07-28 era the server sends no requests to the client. A
// guest's elicitation, sampling or roots request during tools/call,
// prompts/get or resources/read becomes an input_required result (multi
// round-trip requests): the guest's requests under their own ids, and a
// requestState sealed with HMAC-SHA256 (Options.StateKey) that binds the
// caller (Hint.Principal), the method, the request's target and arguments,
// an expiry and the answers used so far. The retry runs the guest again and
// answers its requests from the state and the retry's inputResponses. A
// request for a capability the client did not declare gets the guest error
// -32021, never an input request. subscriptions/listen streams the list
// changes and resource updates a client asks for, each tagged with the
// subscription id, whether they come from a catalog swap or from a guest's
// notification; CloseSubscriptions and Session.EndListens end them.
package protocol
