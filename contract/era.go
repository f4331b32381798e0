package contract

import "fmt"

// Era is the family of MCP revisions a request belongs to, and so a task
// created by one: it decides how a guest's requests reach the client (on
// the legacy session, or as inputRequests the client answers on its next
// request). protocol.Era and a task record's era (tasks.Task.Era) are this
// type. In a task record it is the text "legacy" or "modern".
type Era uint8

// The eras.
const (
	Legacy Era = iota // 2024-11-05 … 2025-11-25: initialize, sessions
	Modern            // 2026-07-28: stateless, _meta on every request
)

// String is "legacy" or "modern".
func (e Era) String() string {
	switch e {
	case Legacy:
		return "legacy"
	case Modern:
		return "modern"
	}
	return fmt.Sprintf("era(%d)", uint8(e))
}

// MarshalText encodes the era as "legacy" or "modern".
func (e Era) MarshalText() ([]byte, error) {
	switch e {
	case Legacy, Modern:
		return []byte(e.String()), nil
	}
	return nil, fmt.Errorf("contract: unknown era %d", uint8(e))
}

// UnmarshalText decodes "legacy" or "modern".
func (e *Era) UnmarshalText(b []byte) error {
	switch string(b) {
	case "legacy":
		*e = Legacy
	case "modern":
		*e = Modern
	default:
		return fmt.Errorf("contract: unknown era %q", b)
	}
	return nil
}
