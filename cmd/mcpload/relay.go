package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// relay serves plain HTTP/1.1 on a loopback address and forwards every
// request to the server over cfg.Proto (HTTP/3 with -http3), so that a
// client that speaks only HTTP/1.1 — the official MCP conformance runner —
// runs its checks against the server's HTTP/3 side. Requests keep their
// method, path, headers and body. The relay stands in for the server: a
// Host header naming the relay's port names the server's instead, and an
// Origin naming the relay (http://HOST:relay port) becomes the server's
// own origin (https://HOST:server port); any other Host or Origin goes
// through as sent, so the server's Host and Origin checks judge what the
// client sent; responses stream back as they come, flushed
// per write, so SSE events arrive one by one. A client that goes away
// cancels its request upstream.
func relay(ctx context.Context, cfg config, listen string, ready func(addr string)) error {
	target, err := url.Parse(cfg.URL)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil || !loopback(host) {
		return fmt.Errorf("-relay %q: want a loopback HOST:PORT", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("-relay: %w", err)
	}
	_, relayPort, _ := net.SplitHostPort(ln.Addr().String())
	rt := newRoundTripper(&cfg)
	defer closeIdle(rt)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = target.Scheme
			r.Out.URL.Host = target.Host
			r.Out.Host = r.In.Host
			if h, p, err := net.SplitHostPort(r.In.Host); err == nil && p == relayPort {
				r.Out.Host = net.JoinHostPort(h, target.Port())
			}
			if o, err := url.Parse(r.In.Header.Get("Origin")); err == nil && o.Scheme == "http" && o.Port() == relayPort {
				r.Out.Header.Set("Origin", target.Scheme+"://"+net.JoinHostPort(o.Hostname(), target.Port()))
			}
		},
		Transport:     checkProto{rt: rt, major: protoMajor(cfg.Proto)},
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("-relay: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	_ = srv.Close()
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// checkProto fails a response that did not come over the HTTP version
// asked for, so that a relay never silently falls back to another.
type checkProto struct {
	rt    http.RoundTripper
	major int
}

func (c checkProto) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.ProtoMajor != c.major {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		return nil, fmt.Errorf("the server answered in %s, not HTTP/%d", resp.Proto, c.major)
	}
	return resp, nil
}
