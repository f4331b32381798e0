// Command netpath is a slow network path on loopback for benchmarks: it
// listens on one TCP port and the UDP port of the same number and forwards
// both to another address, holding every byte (TCP) and every datagram
// (UDP) for a one-way delay in each direction, so that a client talking to
// it sees a round-trip time of twice -delay. It stands in for Linux's
// netem qdisc on kernels built without it (bench/protocols.sh uses it with
// DELAY; random loss comes from the kernel's netfilter, see there).
//
// TCP is relayed connection by connection (the path terminates TCP:
// connection setup and the kernel's loss recovery between the client and
// the path do not see the delay). UDP is relayed datagram by datagram,
// one upstream socket per client address, so QUIC runs end to end and
// sees the whole delay. Order is kept in both. Only loopback addresses
// are accepted.
//
// Usage: netpath -listen 127.0.0.1:PORT -to 127.0.0.2:PORT -delay 25ms
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback HOST:PORT to listen on (TCP and UDP)")
	to := flag.String("to", "", "loopback HOST:PORT to forward to (TCP and UDP)")
	delay := flag.Duration("delay", 25*time.Millisecond, "one-way delay added in each direction (RTT = 2 × delay)")
	flag.Parse()
	if err := run(*listen, *to, *delay); err != nil {
		fmt.Fprintln(os.Stderr, "netpath:", err)
		os.Exit(1)
	}
}

func loopbackAddr(s string) error {
	h, _, err := net.SplitHostPort(s)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address", s)
	}
	return nil
}

func run(listen, to string, delay time.Duration) error {
	if err := loopbackAddr(listen); err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	if err := loopbackAddr(to); err != nil {
		return fmt.Errorf("-to: %w", err)
	}
	if delay < 0 || delay > 10*time.Second {
		return fmt.Errorf("-delay %s: want 0 to 10s", delay)
	}
	tl, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	ta := tl.Addr().(*net.TCPAddr)
	ul, err := net.ListenUDP("udp", &net.UDPAddr{IP: ta.IP, Port: ta.Port})
	if err != nil {
		return fmt.Errorf("UDP on the TCP port: %w", err)
	}
	up, err := net.ResolveUDPAddr("udp", to)
	if err != nil {
		return err
	}
	fmt.Printf("netpath %s -> %s, one-way delay %s\n", tl.Addr(), to, delay)
	go serveTCP(tl, to, delay)
	go serveUDP(ul, up, delay)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	tl.Close()
	ul.Close()
	return nil
}

// chunk is data to deliver at a time.
type chunk struct {
	at   time.Time
	data []byte
}

// line delivers what is put into it after the delay, in order.
type line struct {
	q chan chunk
}

func newLine(delay time.Duration, send func([]byte) error, done func()) *line {
	l := &line{q: make(chan chunk, 4096)}
	go func() {
		defer func() {
			if done != nil {
				done()
			}
		}()
		for c := range l.q {
			if d := time.Until(c.at); d > 0 {
				time.Sleep(d)
			}
			if err := send(c.data); err != nil {
				for range l.q { // drain so the reader never blocks
				}
				return
			}
		}
	}()
	return l
}

func (l *line) put(delay time.Duration, b []byte) {
	l.q <- chunk{at: time.Now().Add(delay), data: append([]byte(nil), b...)}
}

func serveTCP(ln net.Listener, to string, delay time.Duration) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				log.Print(err)
			}
			return
		}
		go relayTCP(c.(*net.TCPConn), to, delay)
	}
}

func relayTCP(c *net.TCPConn, to string, delay time.Duration) {
	u, err := net.Dial("tcp", to)
	if err != nil {
		c.Close()
		return
	}
	s := u.(*net.TCPConn)
	_ = c.SetNoDelay(true)
	_ = s.SetNoDelay(true)
	var wg sync.WaitGroup
	pump := func(dst, src *net.TCPConn) {
		defer wg.Done()
		l := newLine(delay, func(b []byte) error {
			_, err := dst.Write(b)
			return err
		}, func() { _ = dst.CloseWrite() })
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				l.put(delay, buf[:n])
			}
			if err != nil {
				close(l.q)
				return
			}
		}
	}
	wg.Add(2)
	go pump(s, c)
	go pump(c, s)
	wg.Wait()
	// The lines close their write sides once drained; give them the
	// delay to do so before the sockets go.
	time.Sleep(delay + 100*time.Millisecond)
	c.Close()
	s.Close()
}

func serveUDP(ln *net.UDPConn, to *net.UDPAddr, delay time.Duration) {
	type peer struct {
		up   *net.UDPConn
		line *line
	}
	var mu sync.Mutex
	peers := map[string]*peer{}
	buf := make([]byte, 64<<10)
	for {
		n, from, err := ln.ReadFromUDP(buf)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				log.Print(err)
			}
			return
		}
		key := from.String()
		mu.Lock()
		p := peers[key]
		if p == nil {
			up, err := net.DialUDP("udp", nil, to)
			if err != nil {
				mu.Unlock()
				log.Print(err)
				continue
			}
			_ = up.SetReadBuffer(4 << 20)
			p = &peer{up: up}
			p.line = newLine(delay, func(b []byte) error { _, _ = up.Write(b); return nil }, nil) // a datagram not sent is lost, as on a network
			peers[key] = p
			client := from
			back := newLine(delay, func(b []byte) error { _, _ = ln.WriteToUDP(b, client); return nil }, nil)
			go func() {
				rb := make([]byte, 64<<10)
				for {
					// A peer silent for 5 minutes is forgotten.
					_ = up.SetReadDeadline(time.Now().Add(5 * time.Minute))
					n, err := up.Read(rb)
					if err != nil {
						mu.Lock()
						delete(peers, key) // its upstream line's goroutine stays, idle: a bench has few clients
						mu.Unlock()
						up.Close()
						close(back.q)
						return
					}
					back.put(delay, rb[:n])
				}
			}()
		}
		mu.Unlock()
		p.line.put(delay, buf[:n])
	}
}
