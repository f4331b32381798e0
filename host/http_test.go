package host

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

var (
	netprobeOnce sync.Once
	netprobeWasm []byte
	netprobeErr  error
)

func buildNetprobe(t testing.TB) []byte {
	t.Helper()
	netprobeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "host-netprobe")
		if err != nil {
			netprobeErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "netprobe.wasm")
		if netprobeErr = guestbuild.Build(context.Background(), "testdata/guests/netprobe", out); netprobeErr != nil {
			return
		}
		netprobeWasm, netprobeErr = os.ReadFile(out)
	})
	if netprobeErr != nil {
		t.Fatal(netprobeErr)
	}
	return netprobeWasm
}

// guardDialer dials loopback only and fails the test on any other address.
type guardDialer struct{ t testing.TB }

func (d guardDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		d.t.Errorf("dialer asked for %s, which must never be dialled", addr)
		return nil, fmt.Errorf("test dialer: %s refused", addr)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

type fakeResolver map[string]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// loadNetprobe loads the netprobe guest with an outbound HTTP policy on an
// engine whose resolver and dialer never leave loopback.
func loadNetprobe(t *testing.T, hp *egress.Policy, logs *bytes.Buffer) *Module {
	return loadNetprobeB(t, hp, logs)
}

func loadNetprobeB(t testing.TB, hp *egress.Policy, logs *bytes.Buffer) *Module {
	t.Helper()
	wasm := buildNetprobe(t)
	if hp != nil {
		for i := range hp.Allow {
			if err := egress.CheckRule(&hp.Allow[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	var w = &syncBuf{b: logs}
	e, err := NewEngine(Config{CacheDir: testCache, Limits: Limits{Timeout: 20 * time.Second},
		Logger: slog.New(slog.NewTextHandler(w, nil)),
		Egress: egress.Options{Dialer: guardDialer{t}, Resolver: fakeResolver{"metadata.test": "169.254.169.254"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	m, err := e.Load(context.Background(), "netprobe", wasm, Policy{HTTP: hp})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type syncBuf struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func serverRule(_ *testing.T, srvURL string) egress.Rule { return serverRuleB(srvURL) }

func serverRuleB(srvURL string) egress.Rule {
	u, _ := url.Parse(srvURL)
	port, _ := strconv.Atoi(u.Port())
	return egress.Rule{Scheme: "http", Host: u.Hostname(), Port: port}
}

func netCall(t *testing.T, m *Module, tool, args string, peer contract.Peer) string {
	t.Helper()
	s, err := callTool(t, m, peer, tool, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return s
}

func TestGuestHTTP(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/echo":
			fmt.Fprintf(w, "auth=%s", r.Header.Get("Authorization"))
		case "/meta":
			http.Redirect(w, r, "http://metadata.test/latest/", http.StatusFound)
		default:
			fmt.Fprint(w, "hello")
		}
	}))
	defer srv.Close()
	var logs bytes.Buffer
	rule := serverRule(t, srv.URL)
	rule.Headers = []egress.SecretHeader{{Name: "Authorization", Value: "Bearer hunter2"}}
	m := loadNetprobe(t, &egress.Policy{Allow: []egress.Rule{rule, {Scheme: "http", Host: "metadata.test"}},
		Limits: egress.Limits{Requests: 4}}, &logs)

	if got := netCall(t, m, "get", fmt.Sprintf(`{"url":%q}`, srv.URL+"/"), nil); got != "200 hello" {
		t.Fatalf("http.Get in the guest: %q", got)
	}
	got := netCall(t, m, "raw", fmt.Sprintf(`{"url":%q}`, srv.URL+"/echo"), nil)
	if got != "200 auth="+egress.Redacted {
		t.Fatalf("echo: %q", got)
	}
	for _, u := range []string{srv.URL + "/meta", "http://metadata.test/", "http://evil.test/",
		strings.Replace(srv.URL, "127.0.0.1", "2130706433", 1) + "/", "http://allowed@" + strings.TrimPrefix(srv.URL, "http://")} {
		if got := netCall(t, m, "raw", fmt.Sprintf(`{"url":%q}`, u), nil); got != "reason=policy_refused" {
			t.Errorf("%s: %q", u, got)
		}
	}
	if got := netCall(t, m, "raw", fmt.Sprintf(`{"url":%q,"headers":{"X-A":["a\r\nX-Evil: 1"]}}`, srv.URL), nil); got != "reason=invalid_request" {
		t.Errorf("CR/LF header: %q", got)
	}
	// A flood past the per-call limit: 4 requests, then refusals; the
	// next call has its own budget.
	before := hits.Load()
	if got := netCall(t, m, "flood", fmt.Sprintf(`{"url":%q,"n":40}`, srv.URL), nil); got != "ok,ok,ok,ok"+strings.Repeat(",reason=policy_refused", 36) {
		t.Fatalf("flood: %q", got)
	}
	if n := hits.Load() - before; n != 4 {
		t.Fatalf("the server saw %d requests of the flood; the limit is 4", n)
	}
	if got := netCall(t, m, "raw", fmt.Sprintf(`{"url":%q}`, srv.URL), nil); got != "200 hello" {
		t.Fatalf("the next call: %q", got)
	}
	l := logs.String()
	if strings.Contains(l, "hunter2") {
		t.Fatal("the secret reached the log")
	}
	if !strings.Contains(l, `msg="outbound http" module=netprobe call=`) || !strings.Contains(l, "method=GET host=127.0.0.1 status=200") {
		t.Fatalf("no audit line:\n%s", l)
	}
}

// TestGuestHTTPNoGrant: a module without [http] gets a clear refusal.
func TestGuestHTTPNoGrant(t *testing.T) {
	var logs bytes.Buffer
	m := loadNetprobe(t, nil, &logs)
	reply, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(`{"name":"raw","arguments":{"url":"http://127.0.0.1:1/"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(reply.Result, []byte("reason=policy_refused")) {
		t.Fatalf("%s", reply.Result)
	}
}

// TestGuestHTTPReplay: a request made before the call ends for input is
// made again when the call is re-run with the answers (the replay model).
func TestGuestHTTPReplay(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "page")
	}))
	defer srv.Close()
	var logs bytes.Buffer
	m := loadNetprobe(t, &egress.Policy{Allow: []egress.Rule{serverRule(t, srv.URL)}}, &logs)
	args := []byte(fmt.Sprintf(`{"name":"fetch_then_ask","arguments":{"url":%q}}`, srv.URL))
	reply, err := m.Call(context.Background(), abi.MethodToolsCall, args, &inputsPeer{})
	if err != nil {
		t.Fatal(err)
	}
	if inputKeys(reply) != "2:elicitation/create" || hits.Load() != 1 {
		t.Fatalf("first round: inputs %q, %d requests", inputKeys(reply), hits.Load())
	}
	reply, err = m.Call(context.Background(), abi.MethodToolsCall, args, &inputsPeer{answers: map[string]string{"2": `{"action":"accept","content":{}}`}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(reply.Result, []byte("200 page then accept")) {
		t.Fatalf("second round: %s", reply.Result)
	}
	if hits.Load() != 2 {
		t.Fatalf("the request ran %d times; the re-run makes it again", hits.Load())
	}
}
