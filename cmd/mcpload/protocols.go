package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// HTTP versions mcpload speaks (-h2, -http3; HTTP/1.1 otherwise).
const (
	protoHTTP1 = "h1"
	protoHTTP2 = "h2"
	protoHTTP3 = "h3"
)

// protoName is how a report names the HTTP version.
func protoName(p string) string {
	switch p {
	case protoHTTP2:
		return "HTTP/2"
	case protoHTTP3:
		return "HTTP/3"
	}
	return "HTTP/1.1"
}

// protoMajor is the major version of an HTTP version's responses.
func protoMajor(p string) int {
	switch p {
	case protoHTTP2:
		return 2
	case protoHTTP3:
		return 3
	}
	return 1
}

// checkProto validates the HTTP version against the URL's scheme and
// loads the certificate to trust, if any.
func (c *config) checkProto(https bool) error {
	switch c.Proto {
	case "", protoHTTP1:
		c.Proto = protoHTTP1
	case protoHTTP2:
	case protoHTTP3:
		if !https {
			return errors.New("-http3 needs an https:// URL (HTTP/3 is always encrypted)")
		}
	default:
		return fmt.Errorf("unknown HTTP version %q", c.Proto)
	}
	if c.CACert == "" {
		return nil
	}
	if !https {
		return errors.New("-cacert needs an https:// URL")
	}
	b, err := os.ReadFile(c.CACert)
	if err != nil {
		return fmt.Errorf("-cacert: %w", err)
	}
	c.roots = x509.NewCertPool()
	if !c.roots.AppendCertsFromPEM(b) {
		return fmt.Errorf("-cacert %s: no PEM certificate in it", c.CACert)
	}
	return nil
}

// newRoundTripper makes one client's connection to the server: each client
// has its own (one TCP connection, or one QUIC connection), so that the
// protocols are compared with the same number of connections.
func newRoundTripper(cfg *config) http.RoundTripper {
	tlsConf := &tls.Config{RootCAs: cfg.roots, MinVersion: tls.VersionTLS12}
	if cfg.Proto == protoHTTP3 {
		return &http3.Transport{
			TLSClientConfig:    tlsConf,
			DisableCompression: true,
			QUICConfig:         &quic.Config{KeepAlivePeriod: 15 * time.Second, MaxIdleTimeout: time.Minute},
		}
	}
	tr := &http.Transport{
		TLSClientConfig:     tlsConf,
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}
	var p http.Protocols
	switch cfg.Proto {
	case protoHTTP2:
		// Over https by ALPN; over http with prior knowledge (h2c).
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
	default:
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	return tr
}

// closeIdle closes a round tripper's idle connections.
func closeIdle(rt http.RoundTripper) {
	switch t := rt.(type) {
	case *http3.Transport:
		_ = t.Close()
	case interface{ CloseIdleConnections() }:
		t.CloseIdleConnections()
	}
}
