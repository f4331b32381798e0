package oci

import (
	"context"
	"net"
	"strings"
	"testing"
)

// TestLoopbackDialer: a plain-HTTP request whose host name passed as
// loopback ("localhost") is connected only to a loopback address, so a
// name that resolves elsewhere (a hosts file without localhost, a search
// domain) is refused before any packet is sent: Control runs on the
// resolved address before connect.
func TestLoopbackDialer(t *testing.T) {
	marked := context.WithValue(context.Background(), loopbackOnlyKey{}, true)
	// 192.0.2.1 is TEST-NET-1; the dial is refused before connect.
	_, err := dialContext(marked, "tcp", "192.0.2.1:80")
	if err == nil || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("a marked dial to a non-loopback address: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := dialContext(marked, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("a marked dial to loopback: %v", err)
	}
	c.Close()
}
