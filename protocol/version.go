package protocol

import (
	"slices"

	"github.com/wasmcp/wasmcp/contract"
)

// Protocol revisions, oldest first.
const (
	V20241105 = "2024-11-05"
	V20250326 = "2025-03-26"
	V20250618 = "2025-06-18"
	V20251125 = "2025-11-25"
	V20260728 = "2026-07-28"
)

// LegacyVersions returns the revisions with the initialize handshake,
// newest first; the first is the counter-offer to an unknown version.
func LegacyVersions() []string { return []string{V20251125, V20250618, V20250326, V20241105} }

// ModernVersions returns the stateless revisions, newest first.
func ModernVersions() []string { return []string{V20260728} }

// LatestModern is the newest stateless revision, the one a transport
// declares for a request it routes to the modern era.
const LatestModern = V20260728

// Era is the family of revisions a request belongs to: contract.Era, the
// one era type (a task keeps its request's).
type Era = contract.Era

// The eras.
const (
	Legacy = contract.Legacy // 2024-11-05 … 2025-11-25: initialize, sessions
	Modern = contract.Modern // 2026-07-28: stateless, _meta on every request
)

// IsLegacy reports whether v is a legacy revision this server speaks.
func IsLegacy(v string) bool {
	switch v {
	case V20251125, V20250618, V20250326, V20241105:
		return true
	}
	return false
}

// IsModern reports whether v is a modern revision this server speaks.
func IsModern(v string) bool { return v == V20260728 }

// DeclaresModern is the era rule for the revision a transport declares for
// a request (the MCP-Protocol-Version header; "" when none): any revision
// that is not a legacy one, known or not, puts the request in the modern
// era, where an unknown one is then refused with -32022. The rule's other
// half is the request's own _meta protocolVersion (Server.Handle).
func DeclaresModern(v string) bool { return v != "" && !IsLegacy(v) }

// BatchAllowed reports whether revision v accepts JSON-RPC batches: only
// 2024-11-05 and 2025-03-26 do.
func BatchAllowed(v string) bool { return v == V20241105 || v == V20250326 }

// atLeast reports whether revision v is a or later. Revisions are compared
// by position, never as strings; an unknown v satisfies nothing.
func atLeast(v, a string) bool {
	all := []string{V20241105, V20250326, V20250618, V20251125, V20260728}
	i, j := slices.Index(all, v), slices.Index(all, a)
	return i >= 0 && j >= 0 && i >= j
}

// Reserved _meta keys.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaRelatedTask        = "io.modelcontextprotocol/related-task"
	ExtTasks               = "io.modelcontextprotocol/tasks"
)
