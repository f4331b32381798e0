package mcphttp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveOn runs Serve on a free port until the returned stop is called;
// stop returns Serve's error.
func serveOn(t *testing.T, opts Options) (base string, stop func() error) {
	t.Helper()
	ln := freePort(t)
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, ln, newProtocol(), opts) }()
	scheme := "http"
	if opts.TLSCert != "" {
		scheme = "https"
	}
	var once bool
	var err error
	stop = func() error {
		if !once {
			once = true
			cancel()
			err = <-errc
		}
		return err
	}
	t.Cleanup(func() { stop() })
	return scheme + "://" + ln.Addr().String(), stop
}

func postWith(t *testing.T, c *http.Client, url string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	resp, b, err := postRaw(c, url, hdr, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// postRaw is postWith for other goroutines than the test's.
func postRaw(c *http.Client, url string, hdr map[string]string, body string) (*http.Response, string, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestServeH2C(t *testing.T) {
	t.Parallel()
	base, _ := serveOn(t, Options{})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	c := &http.Client{Transport: &http.Transport{Protocols: &p}}
	resp, body := postWith(t, c, base+"/mcp", modern("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta("")+`}}`)
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 || !strings.Contains(body, `"tools"`) {
		t.Fatalf("%s %d %s", resp.Proto, resp.StatusCode, body)
	}
	// HTTP/1.1 on the same listener.
	resp, _ = postWith(t, http.DefaultClient, base+"/mcp", modern("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta("")+`}}`)
	if resp.ProtoMajor != 1 || resp.StatusCode != 200 {
		t.Fatalf("%s %d", resp.Proto, resp.StatusCode)
	}
}

func TestServeTLS(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	base, _ := serveOn(t, Options{TLSCert: cert, TLSKey: key})
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	resp, body := postWith(t, c, base+"/mcp", modern("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta("")+`}}`)
	if resp.ProtoMajor != 2 || resp.TLS == nil || resp.StatusCode != 200 || !strings.Contains(body, `"tools"`) {
		t.Fatalf("%s %d %s", resp.Proto, resp.StatusCode, body)
	}
	if err := func() error {
		ln := freePort(t)
		return Serve(context.Background(), ln, newProtocol(), Options{TLSCert: cert, TLSKey: filepath.Join(t.TempDir(), "missing"), Logger: quiet})
	}(); err == nil {
		t.Fatal("Serve accepted a missing key file")
	}
}

// TestServeGracefulShutdown: calls in flight finish within the grace; the
// GET stream ends; Serve returns.
func TestServeGracefulShutdown(t *testing.T) {
	t.Parallel()
	base, stop := serveOn(t, Options{ShutdownGrace: 20 * time.Second})
	url := base + "/mcp"
	c := &http.Client{}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp, _ := postWith(t, c, url, map[string]string{"Accept": sseAccept}, init)
	sid := resp.Header.Get("Mcp-Session-Id")
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Accept", "text/event-stream")
	get, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	gs := readSSE(get.Body)

	type result struct{ body string }
	modernDone := make(chan result, 1)
	legacyDone := make(chan result, 1)
	go func() {
		_, b, _ := postRaw(c, url, modern("tools/call", "spin"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spin","arguments":{"ms":400},`+meta("")+`}}`)
		modernDone <- result{b}
	}()
	go func() {
		_, b, _ := postRaw(c, url, legacyHdr(sid, "application/json"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spin","arguments":{"ms":400}}}`)
		legacyDone <- result{b}
	}()
	time.Sleep(150 * time.Millisecond)
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	for _, ch := range []chan result{modernDone, legacyDone} {
		select {
		case r := <-ch:
			if !strings.Contains(r.body, "spun") {
				t.Fatalf("a call in flight did not finish: %s", r.body)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a call in flight got no answer")
		}
	}
	gs.ended(t)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second); err == nil {
		t.Fatal("still accepting after shutdown")
	}
}

// TestServeShutdownGraceExpires: a call that outlives the grace is stopped.
func TestServeShutdownGraceExpires(t *testing.T) {
	t.Parallel()
	base, stop := serveOn(t, Options{ShutdownGrace: 100 * time.Millisecond})
	url := base + "/mcp"
	c := &http.Client{}
	resp, _ := postWith(t, c, url, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	go postRaw(c, url, legacyHdr(sid, "application/json"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spin","arguments":{"ms":60000}}}`)
	go postRaw(c, url, modern("tools/call", "spin"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spin","arguments":{"ms":60000},`+meta("")+`}}`)
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
}

func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
