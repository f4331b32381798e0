package mcphttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// HTTP/3 limits. Each is chosen to match what the TCP server allows, so
// that a client gets the same service over either:
const (
	// DefaultHTTP3MaxStreams is the number of request streams one QUIC
	// connection may have open at once (QUIC's initial_max_streams_bidi).
	// A client past it waits for a stream to end; it is not refused. 100
	// is what RFC 9114 asks servers not to go below, and it is quic-go's
	// default too.
	DefaultHTTP3MaxStreams = 100
	// http3IdleTimeout closes an HTTP/3 connection without open requests
	// after this long, as http.Server.IdleTimeout does for TCP.
	http3IdleTimeout = 2 * time.Minute
	// http3QUICIdleTimeout is the QUIC idle timeout the server offers: a
	// connection from which no packet arrives for this long is gone (the
	// effective value is the smaller of both sides' offers; SSE keep-alive
	// comments keep a quiet stream's connection alive).
	http3QUICIdleTimeout = 2 * time.Minute
	// http3HandshakeTimeout bounds the QUIC handshake, as the TCP
	// server's ReadHeaderTimeout bounds a request's start.
	http3HandshakeTimeout = 10 * time.Second
	// http3MaxUniStreams: HTTP/3 needs three unidirectional streams per
	// side (control, QPACK encoder and decoder); the rest is slack for
	// extensions. Server push is not used.
	http3MaxUniStreams = 16
	// altSvcMaxAge is how long (seconds) a client may remember the Alt-Svc
	// advertisement: a day, so that a server that stops serving HTTP/3
	// is not looked for on UDP for long.
	altSvcMaxAge = 86400
)

// http3Server serves a Handler over HTTP/3 on a UDP socket with the same
// port number as the TCP listener.
type http3Server struct {
	srv      *http3.Server
	conn     net.PacketConn
	tr       *quic.Transport
	ln       *quic.EarlyListener
	conns    *connCounter // the QUIC connections open, under Options.MaxConns and MaxConnsPerAddr
	altSvc   string
	inflight atomic.Int64  // HTTP/3 requests in the handler
	done     chan struct{} // closed when Serve has returned, with err set
	err      error
}

// listenHTTP3 opens the UDP socket beside the TCP listener's address and
// prepares the HTTP/3 server; serve starts it. QUIC connections are capped
// as TCP ones are (Options.MaxConns in total, Options.MaxConnsPerAddr per
// remote IP address, counted apart from the TCP connections): a
// connection attempt over a cap is refused in the handshake with QUIC's
// CONNECTION_REFUSED and the refusal logged. Once the connections open, in
// total or from one address, reach half their cap, a new connection must
// first prove its source address (a Retry, one more round trip), so that
// spoofed Initial packets cannot fill an address's places.
func listenHTTP3(h http.Handler, tcpAddr net.Addr, tlsConf *tls.Config, opts Options, refused *rateLog) (*http3Server, error) {
	ta, ok := tcpAddr.(*net.TCPAddr)
	if !ok {
		return nil, fmt.Errorf("mcphttp: HTTP/3 needs a TCP listener address, got %T", tcpAddr)
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: ta.IP, Port: ta.Port, Zone: ta.Zone})
	if err != nil {
		return nil, fmt.Errorf("mcphttp: HTTP/3 on UDP port %d: %w", ta.Port, err)
	}
	headerBytes := opts.MaxHeaderBytes // a HEADERS frame is capped as a TCP header block is
	if headerBytes <= 0 {
		headerBytes = DefaultMaxHeaderBytes
	}
	streams := opts.HTTP3MaxStreams
	if streams <= 0 {
		streams = DefaultHTTP3MaxStreams
	}
	s := &http3Server{conn: conn, done: make(chan struct{}), conns: newConnCounter(opts.MaxConns, opts.MaxConnsPerAddr),
		altSvc: `h3=":` + strconv.Itoa(ta.Port) + `"; ma=` + strconv.Itoa(altSvcMaxAge)}
	quicConf := &quic.Config{
		MaxIncomingStreams:    int64(streams),
		MaxIncomingUniStreams: http3MaxUniStreams,
		MaxIdleTimeout:        http3QUICIdleTimeout,
		HandshakeIdleTimeout:  http3HandshakeTimeout,
		// 0-RTT data can be replayed by an attacker; a tool call is
		// not idempotent, so the server never accepts it.
		Allow0RTT: false,
	}
	s.tr = &quic.Transport{
		Conn: conn,
		VerifySourceAddress: func(a net.Addr) bool {
			return s.conns.busy(remoteIP(a))
		},
		// ConnContext is called once per connection attempt, before the
		// handshake; the context it is given ends when the connection
		// does (closed, timed out or a failed handshake).
		ConnContext: func(ctx context.Context, info *quic.ClientInfo) (context.Context, error) {
			addr := remoteIP(info.RemoteAddr)
			if err := s.conns.acquire(addr); err != nil {
				refuseConn(refused, s.conns, err, addr, "quic")
				return nil, err
			}
			context.AfterFunc(ctx, func() { s.conns.release(addr) })
			return ctx, nil
		},
	}
	tc := http3.ConfigureTLSConfig(tlsConf.Clone())
	if s.ln, err = s.tr.ListenEarly(tc, quicConf); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("mcphttp: HTTP/3 on UDP port %d: %w", ta.Port, err)
	}
	s.srv = &http3.Server{
		Handler:        s.count(h),
		TLSConfig:      tc,
		MaxHeaderBytes: headerBytes,
		IdleTimeout:    http3IdleTimeout,
		QUICConfig:     quicConf,
		Logger:         opts.Logger,
	}
	return s, nil
}

// count tracks the HTTP/3 requests in the handler, so that shutdown knows
// when the last one has ended.
func (s *http3Server) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// advertise wraps the TCP handler: every response names the HTTP/3
// endpoint in Alt-Svc (RFC 7838).
func (s *http3Server) advertise(h http.Handler) http.Handler {
	v := []string{s.altSvc}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Alt-Svc"] = v
		h.ServeHTTP(w, r)
	})
}

// serve starts serving; s.done is closed when it stops.
func (s *http3Server) serve() {
	go func() {
		s.err = s.srv.ServeListener(s.ln)
		close(s.done)
	}()
}

// shutdown drains: it sends GOAWAY on every connection (no new requests),
// waits until the HTTP/3 requests in the handler have ended or ctx is done,
// then closes every connection.
func (s *http3Server) shutdown(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Shutdown(ctx) }()
	// http3.Server.Shutdown returns once the clients have closed their
	// connections, which an idle client never does: close them as soon
	// as no request is left. A request whose stream was accepted just
	// before the GOAWAY may not have reached the handler yet, so the
	// count must be zero on two polls in a row.
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	zero := 0
	for zero < 2 {
		select {
		case err := <-done:
			return shutdownErr(err)
		case <-ctx.Done():
			return shutdownErr(<-done)
		case <-t.C:
		}
		if s.inflight.Load() == 0 {
			zero++
		} else {
			zero = 0
		}
	}
	_ = s.srv.Close()
	return shutdownErr(<-done)
}

func shutdownErr(err error) error {
	if err == nil || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// close ends every HTTP/3 connection at once and releases the socket, then
// returns the error Serve ended with, if any other than closing.
func (s *http3Server) close() error {
	_ = s.srv.Close()
	_ = s.ln.Close()
	_ = s.tr.Close()
	_ = s.conn.Close()
	<-s.done
	err := s.err
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, quic.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// stopped is closed when the HTTP/3 server stops by itself; nil (never
// ready) without HTTP/3.
func (s *http3Server) stopped() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.done
}

// drain runs shutdown in the background; the channel yields its error (at
// once, nil, without HTTP/3).
func (s *http3Server) drain(ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	if s == nil {
		ch <- nil
		return ch
	}
	go func() { ch <- s.shutdown(ctx) }()
	return ch
}
