//go:build unix

package replica

import (
	"io"
	"net"
	"syscall"
)

// peeker looks at the socket of a connection without blocking or
// consuming anything. It is made once per connection, so a check
// allocates nothing.
type peeker struct {
	rc     syscall.RawConn
	result error
	fn     func(fd uintptr) bool
}

func newPeeker(c net.Conn) *peeker {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &peeker{rc: rc}
	p.fn = func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0:
			p.result = errUnexpectedData
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			p.result = nil
		case err != nil:
			p.result = err
		default:
			p.result = io.EOF
		}
		return true // never wait for the socket to become readable
	}
	return p
}

// peek returns nil when nothing is waiting on an idle connection, io.EOF
// when the server closed it, errUnexpectedData when bytes are waiting.
func (p *peeker) peek() error {
	if p == nil {
		return nil
	}
	if err := p.rc.Read(p.fn); err != nil {
		return err
	}
	return p.result
}
