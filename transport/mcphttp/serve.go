package mcphttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/wasmcp/wasmcp/protocol"
)

// Serve serves srv on ln until ctx is done, then shuts down gracefully: it
// stops accepting, ends the streams that never end by themselves, lets
// requests in flight finish for up to opts.ShutdownGrace, then ends every
// session (stopping their guests), closes the remaining connections
// (canceling the 2026-07-28 calls still running) and returns. It speaks
// HTTP/1.1 and HTTP/2: over TLS when opts.TLSCert and opts.TLSKey are set,
// else HTTP/2 without TLS (h2c, prior knowledge).
func Serve(ctx context.Context, ln net.Listener, srv *protocol.Server, opts Options) error {
	if opts.Addr == "" {
		opts.Addr = ln.Addr().String()
	}
	opts.defaults()
	h := New(srv, opts)
	handler := guard(h, opts)
	warnExposed(opts)
	ln = newLimitListener(ln, opts.MaxConns, opts.MaxConnsPerAddr, h.refused)
	hs, useTLS, err := newHTTPServer(handler, opts)
	if err != nil {
		return err
	}
	var h3 *http3Server
	if opts.HTTP3 {
		if h3, err = startHTTP3(hs, handler, ln.Addr(), useTLS, opts, h.refused); err != nil {
			return err
		}
	}
	hs.RegisterOnShutdown(h.BeginShutdown)

	errc := make(chan error, 1)
	go func() {
		if useTLS {
			errc <- hs.ServeTLS(ln, "", "")
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	if opts.Started != nil {
		opts.Started(h)
	}
	select {
	case err := <-errc:
		h.Close()
		if h3 != nil {
			_ = h3.close()
		}
		return fmt.Errorf("mcphttp: serving: %w", err)
	case <-h3.stopped():
		h.Close()
		_ = hs.Close()
		err := h3.close()
		if err == nil {
			err = errors.New("stopped")
		}
		return fmt.Errorf("mcphttp: serving HTTP/3: %w", err)
	case <-ctx.Done():
	}
	return shutdown(h, hs, h3, errc, opts)
}

// guard wraps h in opts.Middleware (an authentication guard) on every
// protocol served, leaving the operator's ExtraRoutes outside it, then
// in opts.Wrap.
func guard(h *Handler, opts Options) http.Handler {
	var handler http.Handler = h
	if opts.Middleware != nil {
		guarded := opts.Middleware(h)
		handler = guarded
		if len(opts.ExtraRoutes) > 0 {
			// The operator's routes (probes, metrics) are not behind the
			// guard: a load balancer's probe carries no credentials. The
			// Host and Origin checks still apply.
			handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, ok := opts.ExtraRoutes[r.URL.Path]; ok {
					h.ServeHTTP(w, r)
					return
				}
				guarded.ServeHTTP(w, r)
			})
		}
	}
	if opts.Wrap != nil {
		handler = opts.Wrap(handler)
	}
	return handler
}

// warnExposed warns when a non-loopback address is served with nothing
// authenticating callers (and, worse, any Host accepted).
func warnExposed(opts Options) {
	if lo, _ := isLoopback(opts.Addr); !lo && opts.Middleware == nil && len(opts.AllowedHosts) == 0 {
		opts.Logger.Warn("serving on a non-loopback address: any Host header is accepted and nothing authenticates "+
			"callers; anyone who can reach this address can call every tool (bind 127.0.0.1, or set the allowed hosts "+
			"and put an authenticating proxy in front)", "addr", opts.Addr)
	} else if !lo && opts.Middleware == nil {
		opts.Logger.Warn("serving on a non-loopback address: nothing authenticates callers; anyone who can reach "+
			"this address with an allowed Host can call every tool", "addr", opts.Addr)
	}
}

// newHTTPServer is the HTTP/1.1 and HTTP/2 server of handler: over TLS
// (useTLS) when opts names a certificate, else h2c.
func newHTTPServer(handler http.Handler, opts Options) (hs *http.Server, useTLS bool, err error) {
	hs = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    opts.MaxHeaderBytes,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: opts.MaxConcurrentStreams},
		// net/http logs accept errors here too, but the listener has
		// already logged them at warning level.
		ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug),
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	useTLS = opts.TLSCert != "" || opts.TLSKey != ""
	if useTLS {
		cert, err := tls.LoadX509KeyPair(opts.TLSCert, opts.TLSKey)
		if err != nil {
			return nil, false, fmt.Errorf("mcphttp: loading the TLS certificate: %w", err)
		}
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		protos.SetHTTP2(true)
	} else {
		protos.SetUnencryptedHTTP2(true)
	}
	hs.Protocols = &protos
	return hs, useTLS, nil
}

// startHTTP3 serves handler over HTTP/3 on the UDP port of addr and has
// hs advertise it. HTTP/3 needs TLS.
func startHTTP3(hs *http.Server, handler http.Handler, addr net.Addr, useTLS bool, opts Options, refused *rateLog) (*http3Server, error) {
	if !useTLS {
		return nil, errors.New("mcphttp: HTTP/3 needs TLS (TLSCert and TLSKey)")
	}
	h3, err := listenHTTP3(handler, addr, hs.TLSConfig, opts, refused)
	if err != nil {
		return nil, err
	}
	hs.Handler = h3.advertise(handler)
	h3.serve()
	opts.Logger.Info("serving HTTP/3", "udp", h3.conn.LocalAddr().String(), "max_streams", h3.srv.QUICConfig.MaxIncomingStreams,
		"max_conns", opts.MaxConns, "max_conns_per_addr", opts.MaxConnsPerAddr)
	return h3, nil
}

// shutdown ends a Serve whose ctx is done: it reports draining, keeps
// serving for opts.DrainDelay, lets requests finish for up to
// opts.ShutdownGrace, then ends every session, closes what remains and
// returns the serve loop's error (errc), if any but the close.
func shutdown(h *Handler, hs *http.Server, h3 *http3Server, errc <-chan error, opts Options) error {
	if opts.Draining != nil {
		opts.Draining()
	}
	if opts.DrainDelay > 0 {
		opts.Logger.Info("draining: not ready, still serving", "for", opts.DrainDelay)
		select {
		case err := <-errc:
			h.Close()
			return fmt.Errorf("mcphttp: serving: %w", err)
		case <-time.After(opts.DrainDelay):
		}
	}
	opts.Logger.Info("shutting down HTTP", "grace", opts.ShutdownGrace)
	grace, cancel := context.WithTimeout(context.Background(), opts.ShutdownGrace)
	h3drained := h3.drain(grace)
	err := hs.Shutdown(grace)
	if err3 := <-h3drained; err == nil {
		err = err3
	}
	cancel()
	if err != nil {
		opts.Logger.Warn("requests still running after the shutdown grace; stopping them", "err", err)
	}
	h.Close()
	_ = hs.Close()
	if h3 != nil {
		if err := h3.close(); err != nil {
			opts.Logger.Warn("HTTP/3 server ended with an error", "err", err)
		}
	}
	if !h.wait(5 * time.Second) {
		opts.Logger.Warn("some requests did not end after shutdown")
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("mcphttp: serving: %w", err)
	}
	return nil
}
