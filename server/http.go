package server

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// HTTPConfig is the HTTP transport's settings (serve's flags of the same
// names; see transport/mcphttp.Options for each).
type HTTPConfig struct {
	Mode          string // --http-mode: "streamable" or "simple"
	LegacySSE     bool   // --legacy-sse
	TLSCert       string // --tls-cert
	TLSKey        string // --tls-key
	Origins       string // --allowed-origins, comma-separated
	Hosts         string // --allowed-hosts, comma-separated
	MaxBody       int64  // --max-body; also caps a stdio line
	ShutdownGrace time.Duration
	SessionIdle   time.Duration
	KeepAlive     time.Duration // --sse-keepalive
	Replay        int           // --sse-replay
	WriteTimeout  time.Duration // --sse-write-timeout

	MaxConns          int
	MaxConnsPerAddr   int
	MaxCallsPerConn   int
	MaxHeaderBytes    int64
	MaxSessions       int
	MaxSessionsPer    int // --max-sessions-per-principal
	MaxStreams        int // --max-sse-streams
	ReadTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration

	HTTP3           bool // --http3
	HTTP3MaxStreams int  // --http3-max-streams
}

func (f *HTTPConfig) options(log *slog.Logger, maxBatch int) (mcphttp.Options, error) {
	opts := mcphttp.Options{
		LegacySSE:      f.LegacySSE,
		TLSCert:        f.TLSCert,
		TLSKey:         f.TLSKey,
		AllowedOrigins: splitList(f.Origins),
		AllowedHosts:   splitList(f.Hosts),
		MaxBody:        f.MaxBody,
		ShutdownGrace:  f.ShutdownGrace,
		SessionIdle:    f.SessionIdle,
		KeepAlive:      f.KeepAlive,
		ReplayEvents:   f.Replay,
		WriteTimeout:   f.WriteTimeout,
		Logger:         log,
		MaxBatch:       maxBatch,

		MaxHeaderBytes:          int(f.MaxHeaderBytes),
		MaxConns:                f.MaxConns,
		MaxConnsPerAddr:         f.MaxConnsPerAddr,
		MaxConcurrentStreams:    f.MaxCallsPerConn,
		MaxSessions:             f.MaxSessions,
		MaxStreams:              f.MaxStreams,
		MaxSessionsPerPrincipal: f.MaxSessionsPer,
		ReadTimeout:             f.ReadTimeout,
		ReadHeaderTimeout:       f.ReadHeaderTimeout,
		IdleTimeout:             f.IdleTimeout,
	}
	for name, v := range map[string]int{"--max-conns": f.MaxConns, "--max-conns-per-addr": f.MaxConnsPerAddr,
		"--max-calls-per-conn": f.MaxCallsPerConn, "--max-sessions": f.MaxSessions, "--max-sse-streams": f.MaxStreams} {
		if v <= 0 {
			return opts, fmt.Errorf("%s %d: want a positive number", name, v)
		}
	}
	if f.MaxSessionsPer < 0 {
		return opts, fmt.Errorf("--max-sessions-per-principal %d: want 0 or a positive number", f.MaxSessionsPer)
	}
	for name, d := range map[string]time.Duration{"--read-timeout": f.ReadTimeout, "--read-header-timeout": f.ReadHeaderTimeout,
		"--idle-timeout": f.IdleTimeout} {
		if d <= 0 {
			return opts, fmt.Errorf("%s %s: want a positive duration", name, d)
		}
	}
	switch f.Mode {
	case "streamable", "":
		opts.Mode = mcphttp.Streamable
	case "simple":
		opts.Mode = mcphttp.Simple
	default:
		return opts, fmt.Errorf("--http-mode %q: want streamable or simple", f.Mode)
	}
	if (f.TLSCert == "") != (f.TLSKey == "") {
		return opts, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if err := f.applyHTTP3(&opts); err != nil {
		return opts, err
	}
	return opts, nil
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// listenHTTP checks the HTTP and auth settings, applies extra to the
// options and binds addr (before the modules load, so a port in use is
// reported at once); serveHTTP serves on the listener.
func listenHTTP(addr string, f *HTTPConfig, af *AuthConfig, maxBatch int, log *slog.Logger, extra ...func(*mcphttp.Options)) (net.Listener, mcphttp.Options, error) {
	opts, err := f.options(log, maxBatch)
	if err != nil {
		return nil, opts, err
	}
	if err := af.check(addr, log); err != nil {
		return nil, opts, err
	}
	for _, fn := range extra {
		fn(&opts)
	}
	ln, err := listenTCP("tcp", addr)
	if err != nil {
		return nil, opts, fmt.Errorf("--http: %w", err)
	}
	// A name is only what the resolver said: "localhost" mapped to a
	// public address in /etc/hosts binds that address. What counts is the
	// address bound.
	if loopbackAddr(addr) && !boundLoopback(ln.Addr()) {
		if err := af.check(ln.Addr().String(), log); err != nil {
			ln.Close()
			return nil, opts, fmt.Errorf("--http %s resolved to %s: %w", addr, ln.Addr(), err)
		}
		if _, ok := opts.ExtraRoutes["/metrics"]; ok {
			// /metrics goes on the MCP listener only on a loopback bind.
			routes := maps.Clone(opts.ExtraRoutes)
			delete(routes, "/metrics")
			opts.ExtraRoutes = routes
			log.Warn("/metrics not served: --http bound a non-loopback address; set --metrics-addr", "http", addr, "bound", ln.Addr().String())
		}
	}
	opts.Addr = ln.Addr().String()
	if opts.Middleware, err = af.wrap(opts.Addr, opts.TLSCert != "", log); err != nil {
		ln.Close()
		return nil, opts, err
	}
	if opts.Middleware != nil {
		opts.Principal = auth.PrincipalName
		opts.StepUp = auth.StepUpChallenge
	}
	return ln, opts, nil
}

// serveHTTP serves MCP over HTTP on ln until ctx is done.
func serveHTTP(ctx context.Context, srv *protocol.Server, ln net.Listener, opts mcphttp.Options, log *slog.Logger) error {
	opts.Logger = log
	scheme := "http"
	if opts.TLSCert != "" {
		scheme = "https"
	}
	mode := "streamable"
	if opts.Mode == mcphttp.Simple {
		mode = "simple"
	}
	base := scheme + "://" + opts.Addr
	if opts.LegacySSE && opts.Mode != mcphttp.Simple {
		log.Info("serving MCP over HTTP", "url", base+"/mcp", "mode", mode, "legacy_sse_url", base+"/sse", "http3", opts.HTTP3)
	} else {
		log.Info("serving MCP over HTTP", "url", base+"/mcp", "mode", mode, "legacy_sse", opts.LegacySSE, "http3", opts.HTTP3)
	}
	return mcphttp.Serve(ctx, ln, srv, opts)
}

// listenTCP binds a TCP listener; a variable so that a test can bind a
// name the way a misconfigured resolver would.
var listenTCP = net.Listen

// boundLoopback reports whether a listener's address is a loopback one.
func boundLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackAddr reports whether addr ("host:port") binds only a loopback
// address.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
