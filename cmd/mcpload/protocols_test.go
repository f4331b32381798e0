package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// serveTLS serves the C word_count example with mcphttp.Serve: HTTPS
// (HTTP/1.1, HTTP/2) and HTTP/3 when certFile is set, else HTTP/1.1 and
// h2c. It returns the endpoint URL.
func serveTLS(t *testing.T, certFile, keyFile string) string {
	t.Helper()
	srv, quiet := wordcountProtocol(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mcphttp.Serve(ctx, ln, srv, mcphttp.Options{TLSCert: certFile, TLSKey: keyFile, HTTP3: certFile != "", Logger: quiet})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	if certFile != "" {
		return "https://" + ln.Addr().String() + "/mcp"
	}
	return "http://" + ln.Addr().String() + "/mcp"
}

func TestLoadEachProtocol(t *testing.T) {
	certFile, keyFile := writeCert(t)
	https := serveTLS(t, certFile, keyFile)
	plain := serveTLS(t, "", "")
	for _, c := range []struct{ url, proto, want string }{
		{https, protoHTTP1, "HTTP/1.1"}, {https, protoHTTP2, "HTTP/2"}, {https, protoHTTP3, "HTTP/3"},
		{plain, protoHTTP1, "HTTP/1.1"}, {plain, protoHTTP2, "HTTP/2"},
	} {
		for _, era := range []string{"modern", "legacy"} {
			cfg := config{URL: c.url, Clients: 3, Duration: 20 * time.Second, Requests: 30, Timeout: 10 * time.Second,
				Tool: "word_count", Args: json.RawMessage(`{"text":"one two"}`), Era: era, Version: legacyVersion, Proto: c.proto}
			if strings.HasPrefix(c.url, "https") {
				cfg.CACert = certFile
			}
			if err := cfg.check(); err != nil {
				t.Fatal(err)
			}
			rep, err := load(context.Background(), cfg)
			if err != nil {
				t.Fatalf("%s %s %s: %v", c.url, c.proto, era, err)
			}
			if rep.Requests != 30 || rep.Errors != 0 || rep.ToolErrors != 0 || rep.Proto != c.want {
				t.Fatalf("%s %s %s: %+v", c.url, c.proto, era, rep)
			}
		}
	}
	// Without -cacert the self-signed certificate is not trusted: every
	// call fails.
	cfg := config{URL: https, Clients: 1, Duration: 5 * time.Second, Requests: 2, Timeout: 5 * time.Second,
		Tool: "word_count", Args: json.RawMessage(`{}`), Era: "modern", Proto: protoHTTP3}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	if rep, err := load(context.Background(), cfg); err != nil || rep.Errors != 2 || !strings.Contains(rep.FirstError, "certificate") {
		t.Fatalf("untrusted certificate: %+v %v", rep, err)
	}
}

func TestProtocolFlags(t *testing.T) {
	certFile, _ := writeCert(t)
	for _, args := range [][]string{
		{"-tool", "x", "-http3"}, // http:// URL
		{"-tool", "x", "-h2", "-http3", "-url", "https://127.0.0.1:1/mcp"}, // both
		{"-tool", "x", "-cacert", certFile},                                // http:// URL
		{"-tool", "x", "-url", "https://127.0.0.1:1/mcp", "-cacert", filepath.Join(t.TempDir(), "none")},
		{"-tool", "x", "-url", "https://127.0.0.1:1/mcp", "-cacert", "protocols_test.go"},
	} {
		var out bytes.Buffer
		if err := run(args, &out); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
}
