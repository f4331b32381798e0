package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// httpFlags are serve's flags for the HTTP transport.
type httpFlags struct {
	mode          string
	legacySSE     bool
	tlsCert       string
	tlsKey        string
	origins       string
	hosts         string
	maxBody       byteSize
	grace         time.Duration
	sessionIdle   time.Duration
	keepAlive     time.Duration
	replay        int
	writeDeadline time.Duration

	maxConns          int
	maxConnsPerAddr   int
	maxCallsPerConn   int
	maxHeader         byteSize
	maxSessions       int
	maxSessionsPer    int
	maxStreams        int
	readTimeout       time.Duration
	readHeaderTimeout time.Duration
	idleTimeout       time.Duration

	h3 http3Flags
}

func (f *httpFlags) register(fs *flag.FlagSet) {
	f.maxBody = mcphttp.DefaultMaxBody
	f.maxHeader = mcphttp.DefaultMaxHeaderBytes
	fs.StringVar(&f.mode, "http-mode", "streamable", `HTTP mode: "streamable" (Streamable HTTP, both eras, sessions and SSE) or "simple" (POST-only JSON, no sessions)`)
	fs.BoolVar(&f.legacySSE, "legacy-sse", false, "also serve the 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (PEM); with --tls-key serves HTTPS with HTTP/2")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.StringVar(&f.origins, "allowed-origins", "", `comma-separated Origins browsers may call from ("scheme://host[:port]", "*" for any); default: none but the server's own, so no other web page (even on localhost) can call the server`)
	fs.StringVar(&f.hosts, "allowed-hosts", "", `comma-separated Host header values served ("name[:port]", "*" for any); default: localhost, 127.0.0.1, [::1] with the port on a loopback bind, any otherwise`)
	fs.Var(&f.maxBody, "max-body", "largest message accepted: an HTTP request body (413 past it) or a stdio line (-32600 past it), e.g. 4MiB, 512KiB or bytes")
	fs.Var(&f.maxHeader, "max-header-bytes", "largest request header block accepted (431 past it)")
	fs.IntVar(&f.maxConns, "max-conns", mcphttp.DefaultMaxConns(), "connections open at once, sized from the file-descriptor limit (3/4 of it, less 96); past it new ones are closed at accept (QUIC connections of --http3 are capped the same, counted apart)")
	fs.IntVar(&f.maxConnsPerAddr, "max-conns-per-addr", mcphttp.DefaultMaxConnsPerAddr, "connections open at once from one remote IP address (raise to --max-conns behind a reverse proxy)")
	fs.IntVar(&f.maxCallsPerConn, "max-calls-per-conn", mcphttp.DefaultMaxConcurrentStreams, "requests in flight on one HTTP/2 connection (HTTP/1.1 serves one at a time)")
	fs.IntVar(&f.maxSessionsPer, "max-sessions-per-principal", 0, "legacy HTTP sessions one authenticated principal may hold (0: --max-sessions); past it that principal's idlest idle session is ended")
	fs.IntVar(&f.maxSessions, "max-sessions", mcphttp.DefaultMaxSessions, "legacy HTTP sessions kept at once; past it the idlest idle session is ended, or initialize gets 503 when all are busy")
	fs.IntVar(&f.maxStreams, "max-sse-streams", mcphttp.DefaultMaxStreams, "standalone SSE streams (GET /mcp, GET /sse) open at once, one per session; past it 503")
	fs.DurationVar(&f.readTimeout, "read-timeout", mcphttp.DefaultReadTimeout, "longest time a client may take to send a request body")
	fs.DurationVar(&f.readHeaderTimeout, "read-header-timeout", mcphttp.DefaultReadHeaderTimeout, "longest time a client may take to send a request's headers")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", mcphttp.DefaultIdleTimeout, "close a keep-alive connection idle this long")
	fs.DurationVar(&f.grace, "shutdown-grace", 10*time.Second, "on SIGINT/SIGTERM, how long requests in flight may finish before their guests are stopped")
	fs.DurationVar(&f.sessionIdle, "session-idle", 30*time.Minute, "end a legacy HTTP session unused for this long")
	fs.DurationVar(&f.keepAlive, "sse-keepalive", 15*time.Second, "interval of keep-alive comments on quiet SSE streams")
	fs.IntVar(&f.replay, "sse-replay", 256, "SSE events kept per legacy session for Last-Event-ID")
	fs.DurationVar(&f.writeDeadline, "sse-write-timeout", 30*time.Second, "longest wait for a client to take one SSE event")
	f.h3.register(fs)
}

func (f *httpFlags) options(log *slog.Logger, maxBatch int) (mcphttp.Options, error) {
	opts := mcphttp.Options{
		LegacySSE:      f.legacySSE,
		TLSCert:        f.tlsCert,
		TLSKey:         f.tlsKey,
		AllowedOrigins: splitList(f.origins),
		AllowedHosts:   splitList(f.hosts),
		MaxBody:        int64(f.maxBody),
		ShutdownGrace:  f.grace,
		SessionIdle:    f.sessionIdle,
		KeepAlive:      f.keepAlive,
		ReplayEvents:   f.replay,
		WriteTimeout:   f.writeDeadline,
		Logger:         log,
		MaxBatch:       maxBatch,

		MaxHeaderBytes:          int(f.maxHeader),
		MaxConns:                f.maxConns,
		MaxConnsPerAddr:         f.maxConnsPerAddr,
		MaxConcurrentStreams:    f.maxCallsPerConn,
		MaxSessions:             f.maxSessions,
		MaxStreams:              f.maxStreams,
		MaxSessionsPerPrincipal: f.maxSessionsPer,
		ReadTimeout:             f.readTimeout,
		ReadHeaderTimeout:       f.readHeaderTimeout,
		IdleTimeout:             f.idleTimeout,
	}
	for name, v := range map[string]int{"--max-conns": f.maxConns, "--max-conns-per-addr": f.maxConnsPerAddr,
		"--max-calls-per-conn": f.maxCallsPerConn, "--max-sessions": f.maxSessions, "--max-sse-streams": f.maxStreams} {
		if v <= 0 {
			return opts, fmt.Errorf("%s %d: want a positive number", name, v)
		}
	}
	if f.maxSessionsPer < 0 {
		return opts, fmt.Errorf("--max-sessions-per-principal %d: want 0 or a positive number", f.maxSessionsPer)
	}
	for name, d := range map[string]time.Duration{"--read-timeout": f.readTimeout, "--read-header-timeout": f.readHeaderTimeout,
		"--idle-timeout": f.idleTimeout} {
		if d <= 0 {
			return opts, fmt.Errorf("%s %s: want a positive duration", name, d)
		}
	}
	switch f.mode {
	case "streamable", "":
		opts.Mode = mcphttp.Streamable
	case "simple":
		opts.Mode = mcphttp.Simple
	default:
		return opts, fmt.Errorf("--http-mode %q: want streamable or simple", f.mode)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return opts, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if err := f.h3.apply(&opts, f.tlsCert != ""); err != nil {
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

// listenHTTP checks the HTTP and auth flags, applies extra to the options
// and binds addr (before the modules load, so a port in use is reported at
// once); serveHTTP serves on the listener.
func listenHTTP(addr string, f *httpFlags, af *authFlags, maxBatch int, log *slog.Logger, extra ...func(*mcphttp.Options)) (net.Listener, mcphttp.Options, error) {
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

// byteSize is a flag holding a size in bytes, written as a number with an
// optional unit: B, KiB, MiB, GiB (or K, M, G, KB, MB, GB, all binary).
type byteSize int64

func (b *byteSize) String() string { return host.FormatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q: want a positive size such as 4MiB", s)
	}
	mult := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
	m, ok := mult[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok {
		return fmt.Errorf("%q: unknown unit (want B, KiB, MiB or GiB)", s)
	}
	*b = byteSize(n * m)
	return nil
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
