package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// http3Flags are serve's flags for HTTP/3.
type http3Flags struct {
	enable     bool
	maxStreams int
}

func (f *http3Flags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.enable, "http3", false, "also serve HTTP/3 (QUIC) on the UDP port of the --http port number; needs --tls-cert and --tls-key (make a development pair with 'wasmcp cert')")
	fs.IntVar(&f.maxStreams, "http3-max-streams", mcphttp.DefaultHTTP3MaxStreams, "HTTP/3: requests one QUIC connection may have open at once (more wait)")
}

// apply sets the HTTP/3 options; tls tells whether a certificate is set.
func (f *http3Flags) apply(opts *mcphttp.Options, tls bool) error {
	if !f.enable {
		return nil
	}
	if !tls {
		return errors.New("--http3 needs --tls-cert and --tls-key (HTTP/3 is always encrypted; 'wasmcp cert' makes a development pair)")
	}
	if f.maxStreams < 1 || f.maxStreams > 1<<16 {
		return fmt.Errorf("--http3-max-streams %d: want 1 to 65536", f.maxStreams)
	}
	opts.HTTP3 = true
	opts.HTTP3MaxStreams = f.maxStreams
	return nil
}
