//go:build !unix

package mcphttp

// fdLimit is unknown outside Unix: DefaultMaxConns falls back to a fixed
// cap.
func fdLimit() int { return 0 }
