package server

import (
	"errors"
	"fmt"

	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// applyHTTP3 sets the HTTP/3 options (--http3, --http3-max-streams): QUIC
// on the UDP port of the HTTP port number, which needs a certificate.
func (f *HTTPConfig) applyHTTP3(opts *mcphttp.Options) error {
	if !f.HTTP3 {
		return nil
	}
	if f.TLSCert == "" {
		return errors.New("--http3 needs --tls-cert and --tls-key (HTTP/3 is always encrypted; 'wasmcp cert' makes a development pair)")
	}
	if f.HTTP3MaxStreams < 1 || f.HTTP3MaxStreams > 1<<16 {
		return fmt.Errorf("--http3-max-streams %d: want 1 to 65536", f.HTTP3MaxStreams)
	}
	opts.HTTP3 = true
	opts.HTTP3MaxStreams = f.HTTP3MaxStreams
	return nil
}
