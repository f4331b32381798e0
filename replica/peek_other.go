//go:build !unix

package replica

import "net"

// peeker is not available here: a connection the server closed while
// idle fails its next command, which is then retried (max_retries).
type peeker struct{}

func newPeeker(net.Conn) *peeker { return nil }

func (*peeker) peek() error { return nil }
