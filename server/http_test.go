package server

import (
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

func TestHTTPConfig(t *testing.T) {
	f := Defaults().HTTP
	f.Mode, f.MaxBody, f.Origins, f.Hosts, f.LegacySSE, f.Replay = "simple", 512<<10, "https://a.example, http://b.example:8080", "a.example", true, 16
	opts, err := f.options(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Mode != mcphttp.Simple || opts.MaxBody != 512<<10 || len(opts.AllowedOrigins) != 2 || opts.AllowedOrigins[1] != "http://b.example:8080" ||
		len(opts.AllowedHosts) != 1 || !opts.LegacySSE || opts.ReplayEvents != 16 {
		t.Fatalf("%+v", opts)
	}

	f = Defaults().HTTP
	f.MaxConns, f.MaxConnsPerAddr, f.MaxCallsPerConn, f.MaxHeaderBytes = 500, 50, 10, 8<<10
	f.MaxSessions, f.MaxSessionsPer, f.MaxStreams = 64, 8, 32
	f.ReadTimeout, f.ReadHeaderTimeout, f.IdleTimeout = 5*time.Second, 2*time.Second, time.Minute
	if opts, err = f.options(nil, 7); err != nil {
		t.Fatal(err)
	}
	if opts.MaxConns != 500 || opts.MaxConnsPerAddr != 50 || opts.MaxConcurrentStreams != 10 || opts.MaxHeaderBytes != 8<<10 ||
		opts.MaxSessions != 64 || opts.MaxSessionsPerPrincipal != 8 || opts.MaxStreams != 32 || opts.MaxBatch != 7 || opts.ReadTimeout != 5*time.Second ||
		opts.ReadHeaderTimeout != 2*time.Second || opts.IdleTimeout != time.Minute {
		t.Fatalf("limits: %+v", opts)
	}
	// The defaults are the transport's, the connection cap sized from the
	// file-descriptor limit.
	f = Defaults().HTTP
	if opts, err = f.options(nil, 100); err != nil || opts.MaxConns != mcphttp.DefaultMaxConns() || opts.MaxSessions != mcphttp.DefaultMaxSessions ||
		opts.MaxHeaderBytes != mcphttp.DefaultMaxHeaderBytes {
		t.Fatalf("defaults: %+v %v", opts, err)
	}
	for name, set := range map[string]func(*HTTPConfig){
		"--http-mode fast":  func(h *HTTPConfig) { h.Mode = "fast" },
		"--tls-cert alone":  func(h *HTTPConfig) { h.TLSCert = "c.pem" },
		"--max-conns 0":     func(h *HTTPConfig) { h.MaxConns = 0 },
		"--max-sessions -1": func(h *HTTPConfig) { h.MaxSessions = -1 },
		"--read-timeout 0s": func(h *HTTPConfig) { h.ReadTimeout = 0 },
	} {
		f := Defaults().HTTP
		set(&f)
		if _, err := f.options(nil, 100); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestHTTP3Config(t *testing.T) {
	f := Defaults().HTTP
	f.HTTP3, f.TLSCert, f.TLSKey, f.HTTP3MaxStreams = true, "c.pem", "k.pem", 32
	opts, err := f.options(nil, 100)
	if err != nil || !opts.HTTP3 || opts.HTTP3MaxStreams != 32 {
		t.Fatalf("%+v %v", opts, err)
	}
	f.HTTP3 = false
	if opts, err := f.options(nil, 100); err != nil || opts.HTTP3 {
		t.Fatalf("HTTP/3 without --http3: %+v %v", opts, err)
	}
	for name, set := range map[string]func(*HTTPConfig){
		"--http3 without TLS":   func(h *HTTPConfig) { h.HTTP3 = true },
		"--http3-max-streams 0": func(h *HTTPConfig) { h.HTTP3, h.TLSCert, h.TLSKey, h.HTTP3MaxStreams = true, "c.pem", "k.pem", 0 },
	} {
		f := Defaults().HTTP
		set(&f)
		if _, err := f.options(nil, 100); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "localhost:1": true,
		"0.0.0.0:80": false, ":80": false, "10.0.0.1:80": false, "bad": false} {
		if loopbackAddr(addr) != want {
			t.Errorf("loopbackAddr(%s) != %v", addr, want)
		}
	}
}
