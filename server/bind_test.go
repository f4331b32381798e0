package server

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// publicAddr is a listener bound on loopback that reports the address a
// resolver mapping "localhost" to a public address would have bound: no
// packet leaves the machine, /etc/hosts is untouched.
type publicAddr struct{ net.Listener }

func (l publicAddr) Addr() net.Addr {
	return &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: l.Listener.Addr().(*net.TCPAddr).Port}
}

// TestListenHTTPChecksBoundAddress: serve --http localhost:PORT with
// --auth none refuses to serve when the name bound a non-loopback
// address, and /metrics leaves the MCP listener then (with --auth or
// --allow-unauthenticated); a real loopback bind still serves (issue 25
// item 15).
func TestListenHTTPChecksBoundAddress(t *testing.T) {
	var names []string
	listenTCP = func(network, addr string) (net.Listener, error) {
		names = append(names, addr)
		ln, err := net.Listen(network, "127.0.0.1:0")
		if err != nil || !strings.HasPrefix(addr, "localhost:") {
			return ln, err
		}
		return publicAddr{ln}, nil
	}
	defer func() { listenTCP = net.Listen }()
	hf := Defaults().HTTP
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	withMetrics := func(o *mcphttp.Options) {
		o.ExtraRoutes = map[string]http.Handler{"/metrics": http.NotFoundHandler(), "/healthz": http.NotFoundHandler()}
	}
	ln, _, err := listenHTTP("localhost:0", &hf, authWith(nil), 0, log, withMetrics)
	if err == nil {
		ln.Close()
		t.Fatal("--http localhost:0 bound 192.0.2.7 and serves without authentication")
	}
	if !strings.Contains(err.Error(), "192.0.2.7") || !strings.Contains(err.Error(), "--allow-unauthenticated") {
		t.Fatalf("error: %v", err)
	}
	for _, af := range []*AuthConfig{authWith(func(a *AuthConfig) { a.AllowUnauthenticated = true }), authWith(func(a *AuthConfig) { a.Provider, a.KeysFile = "apikey", emptyFile(t) })} {
		ln, opts, err := listenHTTP("localhost:0", &hf, af, 0, log, withMetrics)
		if err != nil {
			t.Fatalf("%s: %v", af.Provider, err)
		}
		ln.Close()
		if _, ok := opts.ExtraRoutes["/metrics"]; ok || opts.ExtraRoutes["/healthz"] == nil {
			t.Fatalf("%s: routes on a public bind: %v", af.Provider, opts.ExtraRoutes)
		}
	}
	ln, opts, err := listenHTTP("127.0.0.1:0", &hf, authWith(nil), 0, log, withMetrics)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if opts.ExtraRoutes["/metrics"] == nil {
		t.Fatal("a loopback bind lost /metrics")
	}
}

// emptyFile is an empty regular file (a keys file must be one: not
// /dev/null).
func emptyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
