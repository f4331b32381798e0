package main

import (
	"flag"
	"io"
	"testing"

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
	for _, args := range [][]string{{"--http-mode", "fast"}, {"--tls-cert", "c.pem"}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var f httpFlags
		f.register(fs)
		_ = fs.Parse(args)
		if _, err := f.options(nil, 100); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
