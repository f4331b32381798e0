package mcphttp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// h3Client is an HTTP/3-only client trusting the certificate in certFile.
func h3Client(t *testing.T, certFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no certificate in " + certFile)
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// TestServeHTTP3: the TCP responses advertise HTTP/3; the same handler
// answers over it, and an SSE stream is flushed per event (the guest's
// elicitation reaches the client while the call waits for the answer).
func TestServeHTTP3(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	base, stop := serveOn(t, Options{TLSCert: cert, TLSKey: key, HTTP3: true, ShutdownGrace: 20 * time.Second, MaxBody: 64 << 10})
	url := base + "/mcp"
	port := base[strings.LastIndexByte(base, ':')+1:]

	tcp := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta("") + `}}`
	resp, body := postWith(t, tcp, url, modern("tools/list", ""), list)
	if want := `h3=":` + port + `"; ma=86400`; resp.Header.Get("Alt-Svc") != want || !strings.Contains(body, `"tools"`) {
		t.Fatalf("TCP answer: Alt-Svc %q (want %q) %s", resp.Header.Get("Alt-Svc"), want, body)
	}

	c := h3Client(t, cert)
	resp, body = postWith(t, c, url, modern("tools/list", ""), list)
	if resp.ProtoMajor != 3 || resp.StatusCode != 200 || !strings.Contains(body, `"spin"`) || resp.Header.Get("Alt-Svc") != "" {
		t.Fatalf("HTTP/3 answer: %s %d Alt-Svc %q %s", resp.Proto, resp.StatusCode, resp.Header.Get("Alt-Svc"), body)
	}
	// The Host check applies as over TCP.
	if resp, body := postWith(t, c, strings.Replace(url, "127.0.0.1", "localhost", 1), modern("tools/list", ""), list); resp.StatusCode != 200 {
		t.Fatalf("localhost: %d %s", resp.StatusCode, body)
	}
	if resp, _ := postWith(t, c, url, with(modern("tools/list", ""), "Origin", "https://evil.example"), list); resp.StatusCode != 403 {
		t.Fatalf("bad Origin over HTTP/3: %d", resp.StatusCode)
	}

	// An oversized body is refused with 413 and no Connection header,
	// which HTTP/3 forbids (the client would reject the answer).
	big := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + meta("") + `,"pad":"` + strings.Repeat("x", 70<<10) + `"}}`
	if resp, body := postWith(t, c, url, modern("tools/list", ""), big); resp.StatusCode != 413 {
		t.Fatalf("oversized body over HTTP/3: %d %s", resp.StatusCode, body)
	}

	// A legacy session: ask elicits on the POST's SSE stream; only a
	// flushed event lets the client answer.
	resp, _ = postWith(t, c, url, map[string]string{"Accept": sseAccept, "Content-Type": "application/json"},
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize over HTTP/3: no session")
	}
	postWith(t, c, url, legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{},"_meta":{"progressToken":"p"}}}`))
	for k, v := range legacyHdr(sid, sseAccept) {
		req.Header.Set(k, v)
	}
	call, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer call.Body.Close()
	if call.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tools/call answered %s", call.Header.Get("Content-Type"))
	}
	events := readSSE(call.Body)
	var final map[string]any
	for final == nil {
		m := events.nextMsg(t)
		switch {
		case m["method"] == "elicitation/create":
			id, _ := json.Marshal(m["id"])
			if r, b := postWith(t, c, url, legacyHdr(sid, sseAccept), `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"action":"accept","content":{"name":"Ada"}}}`); r.StatusCode != 202 {
				t.Fatalf("answer: %d %s", r.StatusCode, b)
			}
		case m["id"] == float64(2):
			final = m
		}
	}
	if got := text(t, final); got != "accept: hello Ada" {
		t.Fatalf("ask over HTTP/3: %q", got)
	}

	// Graceful shutdown: a call in flight over HTTP/3 finishes, a GET
	// stream ends, and an idle HTTP/3 connection does not hold Serve for
	// the grace.
	get, _ := http.NewRequest(http.MethodGet, url, nil)
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Accept", "text/event-stream")
	gresp, err := c.Do(get)
	if err != nil || gresp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", gresp, err)
	}
	defer gresp.Body.Close()
	gs := readSSE(gresp.Body)
	// The call reports progress before it spins: once that event is read,
	// the request is in the handler, and shutdown must let it finish.
	req3, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"spin","arguments":{"ms":400},`+meta(`"progressToken":"s"`)+`}}`))
	for k, v := range modern("tools/call", "spin") {
		req3.Header.Set(k, v)
	}
	sresp, err := c.Do(req3)
	if err != nil || sresp.StatusCode != 200 {
		t.Fatalf("spin over HTTP/3: %v %v", sresp, err)
	}
	defer sresp.Body.Close()
	ss := readSSE(sresp.Body)
	if m := ss.nextMsg(t); m["method"] != "notifications/progress" {
		t.Fatalf("spin's first event: %v", m)
	}
	spun := make(chan string, 1)
	go func() {
		for {
			ev, ok := <-ss.events
			if !ok {
				spun <- "stream ended without an answer"
				return
			}
			if bytes.Contains(ev.data, []byte(`"result"`)) || bytes.Contains(ev.data, []byte(`"error"`)) {
				spun <- string(ev.data)
				return
			}
		}
	}()
	start := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	select {
	case b := <-spun:
		if !strings.Contains(b, "spun") {
			t.Fatalf("the call in flight did not finish: %s", b)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight got no answer")
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
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v with a 20 s grace: idle HTTP/3 connections held it", d)
	}
}

func TestServeHTTP3NeedsTLS(t *testing.T) {
	t.Parallel()
	ln := freePort(t)
	defer ln.Close()
	err := Serve(context.Background(), ln, newProtocol(), Options{HTTP3: true, Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("HTTP/3 without TLS: %v", err)
	}
}

// h3ClientFrom is h3Client with its QUIC connections sent from the local
// IP address from.
func h3ClientFrom(t *testing.T, certFile, from string) (*http.Client, *http3.Transport) {
	t.Helper()
	c := h3Client(t, certFile)
	tr := c.Transport.(*http3.Transport)
	tr.Dial = func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(from)})
		if err != nil {
			return nil, err
		}
		ra, err := net.ResolveUDPAddr("udp", addr)
		if err != nil {
			udp.Close()
			return nil, err
		}
		conn, err := quic.DialEarly(ctx, udp, ra, tc, qc)
		if err != nil {
			udp.Close()
			return nil, err
		}
		context.AfterFunc(conn.Context(), func() { udp.Close() })
		return conn, nil
	}
	c.Timeout = 20 * time.Second
	return c, tr
}

// TestHTTP3ConnCaps: QUIC connections are capped as TCP ones are, in
// total and per remote address; a connection past a cap is refused in its
// handshake while the connections already open are still served, and a
// closed connection gives its place back.
func TestHTTP3ConnCaps(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("dials from 127.0.0.2 and 127.0.0.3, which only Linux routes by default")
	}
	log, buf := logTo()
	cert, key := selfSigned(t)
	base, _ := serveOn(t, Options{TLSCert: cert, TLSKey: key, HTTP3: true, MaxConns: 2, MaxConnsPerAddr: 1, Logger: log})
	url := base + "/mcp"
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta("") + `}}`
	served := func(c *http.Client) error {
		resp, body, err := postRaw(c, url, modern("tools/list", ""), list)
		if err != nil {
			return err
		}
		if resp.ProtoMajor != 3 || resp.StatusCode != 200 || !strings.Contains(body, `"spin"`) {
			return fmt.Errorf("%s %d %s", resp.Proto, resp.StatusCode, body)
		}
		return nil
	}
	refused := func(c *http.Client, what string) {
		t.Helper()
		err := served(c)
		var te *quic.TransportError
		if !errors.As(err, &te) || te.ErrorCode != quic.ConnectionRefused {
			t.Fatalf("%s: want CONNECTION_REFUSED, got %v", what, err)
		}
	}

	a, aTr := h3ClientFrom(t, cert, "127.0.0.1")
	if err := served(a); err != nil {
		t.Fatal(err)
	}
	b, _ := h3ClientFrom(t, cert, "127.0.0.1")
	refused(b, "a second connection from one address")
	// Past half the cap a new connection proves its address first (a
	// Retry); it is then accepted.
	c, _ := h3ClientFrom(t, cert, "127.0.0.2")
	if err := served(c); err != nil {
		t.Fatal(err)
	}
	d, _ := h3ClientFrom(t, cert, "127.0.0.3")
	refused(d, "a connection past the total cap")
	// The connections already open are still served.
	if err := served(a); err != nil {
		t.Fatalf("an open connection past the cap: %v", err)
	}
	if err := served(c); err != nil {
		t.Fatalf("an open connection past the cap: %v", err)
	}
	for _, want := range []string{"connection refused: the remote address is at its connection cap", "connection refused: the server is at its connection cap", "proto=quic"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf)
		}
	}
	// Closing a's connection frees its place for b.
	aTr.Close()
	waitFor(t, "a closed QUIC connection to give its place back", func() bool { return served(b) == nil })
}
