//go:build !unix

package replica

import "net"

// peek is not available here: a connection the server closed while idle
// fails its next command, which is then retried (max_retries).
func peek(net.Conn) error { return nil }
