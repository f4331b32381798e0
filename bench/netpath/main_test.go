package main

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestPath: TCP and UDP echoes through the path come back intact, in
// order, a round trip (2 × delay) later.
func TestPath(t *testing.T) {
	const delay = 40 * time.Millisecond
	echoTCP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echoTCP.Close()
	port := echoTCP.Addr().(*net.TCPAddr).Port
	echoUDP, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Skip("UDP port taken:", err)
	}
	defer echoUDP.Close()
	go func() {
		for {
			c, err := echoTCP.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	go func() {
		b := make([]byte, 2048)
		for {
			n, from, err := echoUDP.ReadFromUDP(b)
			if err != nil {
				return
			}
			_, _ = echoUDP.WriteToUDP(b[:n], from)
		}
	}()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	ul, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: tl.Addr().(*net.TCPAddr).Port})
	if err != nil {
		t.Skip("UDP port taken:", err)
	}
	defer ul.Close()
	go serveTCP(tl, echoTCP.Addr().String(), delay)
	go serveUDP(ul, echoUDP.LocalAddr().(*net.UDPAddr), delay)

	c, err := net.Dial("tcp", tl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := bytes.Repeat([]byte("0123456789"), 10000)
	start := time.Now()
	go func() { _, _ = c.Write(msg) }()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 2*delay {
		t.Errorf("TCP round trip %v, want at least %v", rtt, 2*delay)
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("TCP bytes changed on the way")
	}

	u, err := net.Dial("udp", ul.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	start = time.Now()
	for i := byte(0); i < 5; i++ {
		_, _ = u.Write([]byte{i})
	}
	_ = u.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i := byte(0); i < 5; i++ {
		b := make([]byte, 16)
		n, err := u.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 || b[0] != i {
			t.Fatalf("datagram %d came back as %v", i, b[:n])
		}
	}
	if rtt := time.Since(start); rtt < 2*delay {
		t.Errorf("UDP round trip %v, want at least %v", rtt, 2*delay)
	}
	if err := run("0.0.0.0:0", "127.0.0.1:1", delay); err == nil {
		t.Error("a non-loopback listen address was accepted")
	}
}
