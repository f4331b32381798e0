package mcphttp

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Default limits of a Handler and Serve (see Options and
// docs/network.md, "Running on a network").
const (
	// DefaultMaxBody is the largest request body accepted.
	DefaultMaxBody = 4 << 20
	// DefaultMaxHeaderBytes bounds a request's header block: MCP requests
	// need a few KiB (a bearer token, the Mcp-* headers).
	DefaultMaxHeaderBytes = 16 << 10
	// DefaultMaxSessions bounds the legacy sessions kept at once.
	DefaultMaxSessions = 4096
	// DefaultMaxStreams bounds the standalone SSE streams (GET /mcp and
	// GET /sse) open at once.
	DefaultMaxStreams = 1024
	// DefaultMaxBatch bounds the elements of one JSON-RPC batch.
	DefaultMaxBatch = 100
	// DefaultMaxConnsPerAddr bounds the connections from one remote IP
	// address.
	DefaultMaxConnsPerAddr = 256
	// DefaultMaxConcurrentStreams bounds the HTTP/2 streams (requests in
	// flight) of one connection.
	DefaultMaxConcurrentStreams = 100
	// DefaultReadTimeout bounds the reading of one request body.
	DefaultReadTimeout = 30 * time.Second
	// DefaultReadHeaderTimeout bounds the reading of a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 2 * time.Minute
	// retryAfter is the Retry-After, in seconds, of a 503 over a cap.
	retryAfter = "5"
)

// DefaultMaxConns is the default cap on open connections: three quarters
// of the process's file-descriptor limit (RLIMIT_NOFILE, which the Go
// runtime raises to its hard value at start) less a reserve, so that
// module files, the compilation cache, the task store and the guests'
// files always find a descriptor.
func DefaultMaxConns() int {
	n := fdLimit()
	if n <= 0 {
		return 1024
	}
	return max(16, (n-128)*3/4)
}

// rateLog logs an event at warning level at most once per interval per
// key, with the number of occurrences since the last line: a flood of
// refusals shows in the log without becoming a flood of log lines.
type rateLog struct {
	log   *slog.Logger
	every time.Duration

	mu   sync.Mutex
	keys map[string]*rateEntry
}

type rateEntry struct {
	last   time.Time
	missed int
}

func newRateLog(log *slog.Logger, every time.Duration) *rateLog {
	return &rateLog{log: log, every: every, keys: map[string]*rateEntry{}}
}

// warn logs msg with args unless key was logged less than an interval ago.
func (l *rateLog) warn(key, msg string, args ...any) {
	now := time.Now()
	l.mu.Lock()
	e := l.keys[key]
	if e == nil {
		e = &rateEntry{}
		l.keys[key] = e
	}
	if !e.last.IsZero() && now.Sub(e.last) < l.every {
		e.missed++
		l.mu.Unlock()
		return
	}
	missed := e.missed
	e.last, e.missed = now, 0
	l.mu.Unlock()
	if missed > 0 {
		args = append(args, "suppressed", missed)
	}
	l.log.Warn(msg, args...)
}

// connCounter counts the connections open at once, in total and per
// remote IP address, against two caps. The TCP listener and the QUIC
// transport each have one, with the same caps.
type connCounter struct {
	max, perAddr int

	mu     sync.Mutex
	total  int
	byAddr map[string]int
}

func newConnCounter(max, perAddr int) *connCounter {
	return &connCounter{max: max, perAddr: perAddr, byAddr: map[string]int{}}
}

// acquire counts a connection from addr, or reports which cap it is over:
// errConnCap or errConnAddrCap.
func (c *connCounter) acquire(addr string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.total >= c.max:
		return errConnCap
	case c.byAddr[addr] >= c.perAddr:
		return errConnAddrCap
	}
	c.total++
	c.byAddr[addr]++
	return nil
}

// release gives back the place of a connection from addr.
func (c *connCounter) release(addr string) {
	c.mu.Lock()
	c.total--
	if c.byAddr[addr]--; c.byAddr[addr] <= 0 {
		delete(c.byAddr, addr)
	}
	c.mu.Unlock()
}

// busy tells whether the connections open, in total or from addr, have
// reached half their cap.
func (c *connCounter) busy(addr string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return 2*c.total >= c.max || 2*c.byAddr[addr] >= c.perAddr
}

// open is the number of connections counted now.
func (c *connCounter) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

var (
	errConnCap     = errors.New("the server is at its connection cap")
	errConnAddrCap = errors.New("the remote address is at its connection cap")
)

// refuseConn logs the refusal of a connection from addr over a cap.
func refuseConn(log *rateLog, c *connCounter, err error, addr, proto string) {
	if errors.Is(err, errConnCap) {
		log.warn("conns-"+proto, "connection refused: "+err.Error(), "proto", proto, "remote", addr, "max_conns", c.max)
		return
	}
	log.warn("conns-addr-"+proto, "connection refused: "+err.Error(), "proto", proto, "remote", addr, "max_conns_per_addr", c.perAddr)
}

// limitListener caps the connections open at once, in total and per
// remote IP address. A connection over a cap is closed as soon as it is
// accepted (its client sees the connection end) and the refusal logged.
// Accept errors (such as running out of file descriptors) are logged at
// warning level before net/http retries.
type limitListener struct {
	net.Listener
	log   *rateLog
	conns *connCounter
}

func newLimitListener(ln net.Listener, max, perAddr int, log *rateLog) *limitListener {
	return &limitListener{Listener: ln, log: log, conns: newConnCounter(max, perAddr)}
}

// Accept returns the next connection within the caps.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				l.log.warn("accept", "accepting a connection failed", "err", err)
			}
			return nil, err
		}
		addr := remoteIP(c.RemoteAddr())
		if err := l.conns.acquire(addr); err != nil {
			_ = c.Close()
			refuseConn(l.log, l.conns, err, addr, "tcp")
			continue
		}
		return &limitedConn{Conn: c, l: l.conns, addr: addr}, nil
	}
}

// open is the number of connections counted now.
func (l *limitListener) open() int { return l.conns.open() }

// limitedConn gives its place back when closed.
type limitedConn struct {
	net.Conn
	l    *connCounter
	addr string
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	return err
}

// remoteIP is the IP address of a remote address, without its port.
func remoteIP(a net.Addr) string {
	switch t := a.(type) {
	case *net.TCPAddr:
		return t.IP.String()
	case *net.UDPAddr:
		return t.IP.String()
	}
	s := a.String()
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h
	}
	return s
}
