package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

func TestHTTPFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f httpFlags
	f.register(fs)
	if err := fs.Parse([]string{"--http-mode", "simple", "--max-body", "512KiB", "--allowed-origins", "https://a.example, http://b.example:8080",
		"--allowed-hosts", "a.example", "--legacy-sse", "--sse-replay", "16"}); err != nil {
		t.Fatal(err)
	}
	opts, err := f.options(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Mode != mcphttp.Simple || opts.MaxBody != 512<<10 || len(opts.AllowedOrigins) != 2 || opts.AllowedOrigins[1] != "http://b.example:8080" ||
		len(opts.AllowedHosts) != 1 || !opts.LegacySSE || opts.ReplayEvents != 16 {
		t.Fatalf("%+v", opts)
	}

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f = httpFlags{}
	f.register(fs)
	if err := fs.Parse([]string{"--max-conns", "500", "--max-conns-per-addr", "50", "--max-calls-per-conn", "10", "--max-header-bytes", "8KiB",
		"--max-sessions", "64", "--max-sessions-per-principal", "8", "--max-sse-streams", "32", "--read-timeout", "5s", "--read-header-timeout", "2s", "--idle-timeout", "1m"}); err != nil {
		t.Fatal(err)
	}
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
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	f = httpFlags{}
	f.register(fs)
	if opts, err = f.options(nil, 100); err != nil || opts.MaxConns != mcphttp.DefaultMaxConns() || opts.MaxSessions != mcphttp.DefaultMaxSessions ||
		opts.MaxHeaderBytes != mcphttp.DefaultMaxHeaderBytes {
		t.Fatalf("defaults: %+v %v", opts, err)
	}

	var b byteSize
	for in, want := range map[string]int64{"4MiB": 4 << 20, "100": 100, "2k": 2 << 10, "1 GiB": 1 << 30} {
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("%q: %d %v", in, b, err)
		}
	}
	for _, in := range []string{"", "0", "-1", "4TiB", "MiB", "1.5MiB"} {
		if err := b.Set(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	for _, args := range [][]string{{"--http-mode", "fast"}, {"--tls-cert", "c.pem"}, {"--max-conns", "0"}, {"--max-sessions", "-1"}, {"--read-timeout", "0s"}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var f httpFlags
		f.register(fs)
		_ = fs.Parse(args)
		if _, err := f.options(nil, 100); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
