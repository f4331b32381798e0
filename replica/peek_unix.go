//go:build unix

package replica

import (
	"io"
	"net"
	"syscall"
)

// peek looks at the socket of c without blocking or consuming anything:
// nil when nothing is waiting (a healthy idle connection), io.EOF when
// the server closed it, errUnexpectedData when bytes are waiting.
func peek(c net.Conn) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var result error
	if err := rc.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0:
			result = errUnexpectedData
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			result = nil
		case err != nil:
			result = err
		default:
			result = io.EOF
		}
		return true // never wait for the socket to become readable
	}); err != nil {
		return err
	}
	return result
}
