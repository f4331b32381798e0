package egress

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// fakeDNS resolves only the names a test gives it.
type fakeDNS map[string][]netip.Addr

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// loopDialer dials loopback only, and fails the test if asked for any
// other address: no packet ever leaves the machine, and a refused address
// that reaches the dialer is a bug.
type loopDialer struct {
	t      *testing.T
	mu     sync.Mutex
	dialed []string
	refuse map[netip.Addr]bool // addresses that must never be dialled
}

func (d *loopDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		d.t.Errorf("dialer asked for %q, not an IP:port", addr)
		return nil, err
	}
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	d.mu.Unlock()
	if !ap.Addr().IsLoopback() || d.refuse[ap.Addr()] {
		d.t.Errorf("dialer asked for %s, which must never be dialled", addr)
		return nil, fmt.Errorf("test dialer: %s refused", addr)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

type env struct {
	t    *testing.T
	dns  fakeDNS
	dial *loopDialer
	logs *bytes.Buffer
	done doneLog
}

// doneLog records what an Observer is told.
type doneLog struct {
	mu   sync.Mutex
	list []Done
}

func (l *doneLog) RequestDone(_ context.Context, d *Done) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, *d)
}

func newEnv(t *testing.T) *env {
	return &env{t: t, dns: fakeDNS{}, dial: &loopDialer{t: t}, logs: &bytes.Buffer{}}
}

func (e *env) session(p *Policy) *Session {
	e.t.Helper()
	for i := range p.Allow {
		if err := CheckRule(&p.Allow[i]); err != nil {
			e.t.Fatal(err)
		}
	}
	c, err := NewClient(p, Options{Resolver: e.dns, Dialer: e.dial, Logger: slog.New(slog.NewTextHandler(e.logs, nil)), Observer: &e.done})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c.NewSession("mod", 7)
}

// loopRule allows every method on a loopback test server.
func loopRule(srvURL string) Rule {
	u, _ := url.Parse(srvURL)
	port, _ := strconv.Atoi(u.Port())
	return Rule{Scheme: u.Scheme, Host: u.Hostname(), Port: port, Methods: []string{"GET", "POST", "HEAD"}}
}

func do(s *Session, r abi.HTTPRequest) (*abi.HTTPResponse, *Error) {
	return s.Do(context.Background(), &r)
}

func wantReason(t *testing.T, e *Error, reason string) {
	t.Helper()
	if e == nil {
		t.Fatalf("want a %s error, got success", reason)
	}
	if e.Reason != reason {
		t.Fatalf("want reason %s, got %v", reason, e)
	}
}

func TestSuccessHeadersBinary(t *testing.T) {
	bin := []byte{0, 1, 2, 0xff, 0xfe, 'x'}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Got", fmt.Sprintf("%s|%s|%x", r.Header.Get("X-Mine"), r.Method, b))
		if r.URL.Path == "/bin" {
			w.Write(bin)
			return
		}
		w.WriteHeader(201)
		io.WriteString(w, "héllo")
	}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{loopRule(srv.URL)}})
	r, err := do(s, abi.HTTPRequest{Method: "post", URL: srv.URL + "/t", Headers: map[string][]string{"X-Mine": {"a"}}, Body: "payload"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 201 || r.Body != "héllo" || r.Headers["X-Got"][0] != "a|POST|"+fmt.Sprintf("%x", "payload") {
		t.Fatalf("got %+v", r)
	}
	r, err = do(s, abi.HTTPRequest{URL: srv.URL + "/bin", BodyBase64: base64.StdEncoding.EncodeToString(bin)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := base64.StdEncoding.DecodeString(r.BodyBase64)
	if !bytes.Equal(got, bin) || r.Body != "" {
		t.Fatalf("binary body: %+v", r)
	}
	if r.Headers["X-Got"][0] != "|GET|"+fmt.Sprintf("%x", bin) {
		t.Fatalf("binary request body: %q", r.Headers["X-Got"][0])
	}
	logs := e.logs.String()
	if strings.Count(logs, "outbound http") != 2 || !strings.Contains(logs, "module=mod call=7 method=POST host=127.0.0.1 status=201 bytes_out=7 bytes_in=6") {
		t.Fatalf("audit lines:\n%s", logs)
	}
	if strings.Contains(logs, "payload") || strings.Contains(logs, "héllo") {
		t.Fatalf("a body reached the log:\n%s", logs)
	}
}

func TestDenyByDefault(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{})
	_, err := do(s, abi.HTTPRequest{URL: srv.URL})
	wantReason(t, err, abi.HTTPPolicyRefused)
	// Allowed host, wrong method, wrong path, wrong port.
	rule := loopRule(srv.URL)
	rule.Methods = nil
	rule.PathPrefix = "/api"
	s = e.session(&Policy{Allow: []Rule{rule}})
	for _, r := range []abi.HTTPRequest{
		{Method: "POST", URL: srv.URL + "/api/x"},
		{URL: srv.URL + "/apix"},
		{URL: srv.URL + "/api/../admin"},
		{URL: srv.URL + "/api/%2e%2e/admin"},
		{URL: srv.URL + "/api%2F..%2Fadmin"},
		{URL: "http://127.0.0.1:1/api"},
		{URL: strings.Replace(srv.URL, "http:", "https:", 1) + "/api"},
	} {
		_, err := do(s, r)
		wantReason(t, err, abi.HTTPPolicyRefused)
	}
	if _, err := do(s, abi.HTTPRequest{URL: srv.URL + "/api/ok"}); err != nil {
		t.Fatal(err)
	}
	if len(e.dial.dialed) != 1 {
		t.Fatalf("dialled %v; only the allowed request may dial", e.dial.dialed)
	}
}

func TestRedirects(t *testing.T) {
	var mu sync.Mutex
	var seenAuth []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seenAuth = append(seenAuth, "other:"+r.Header.Get("Authorization"))
		mu.Unlock()
		io.WriteString(w, "other")
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seenAuth = append(seenAuth, r.URL.Path+":"+r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/in":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/out":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		case "/meta":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/metaname":
			http.Redirect(w, r, "http://metadata.test/", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			io.WriteString(w, "final")
		}
	}))
	defer srv.Close()
	e := newEnv(t)
	meta := netip.MustParseAddr("169.254.169.254")
	e.dns["metadata.test"] = []netip.Addr{meta}
	e.dial.refuse = map[netip.Addr]bool{meta: true}
	rule := loopRule(srv.URL)
	rule.Headers = []SecretHeader{{Name: "Authorization", Value: "Bearer s3cret"}}
	rule.FollowRedirects = true
	s := e.session(&Policy{Allow: []Rule{rule,
		{Scheme: "http", Host: "metadata.test"}, {Scheme: "http", Host: "*.254.169.254"}}})
	r, err := do(s, abi.HTTPRequest{URL: srv.URL + "/in"})
	if err != nil || r.Body != "final" || !strings.HasSuffix(r.URL, "/final") {
		t.Fatalf("redirect inside the list: %+v %v", r, err)
	}
	_, err = do(s, abi.HTTPRequest{URL: srv.URL + "/out"})
	wantReason(t, err, abi.HTTPPolicyRefused)
	_, err = do(s, abi.HTTPRequest{URL: srv.URL + "/meta"})
	wantReason(t, err, abi.HTTPPolicyRefused)
	_, err = do(s, abi.HTTPRequest{URL: srv.URL + "/metaname"})
	wantReason(t, err, abi.HTTPPolicyRefused)
	_, err = do(s, abi.HTTPRequest{URL: srv.URL + "/loop"})
	if err == nil {
		t.Fatal("a redirect loop ended")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range seenAuth {
		if strings.HasPrefix(a, "other:") {
			t.Fatalf("the redirect left the list but reached the other server: %v", seenAuth)
		}
	}
	if seenAuth[0] != "/in:Bearer s3cret" || seenAuth[1] != "/final:Bearer s3cret" {
		t.Fatalf("secret not sent to its destination: %v", seenAuth)
	}
}

// TestRedirectDropsSecret: a redirect of a secret-bearing request to
// another destination is refused, follow_redirects or not, and the other
// destination is never asked; a same-host redirect to another rule gets
// that rule's headers, not the first one's.
func TestRedirectDropsSecret(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other destination was asked: Authorization %q X-Key %q", r.Header.Get("Authorization"), r.Header.Get("X-Key"))
	}))
	defer other.Close()
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a/out":
			http.Redirect(w, r, other.URL+"/", http.StatusTemporaryRedirect)
		case "/a/in":
			http.Redirect(w, r, "/b/", http.StatusTemporaryRedirect)
		default:
			got <- r.Header.Get("Authorization") + "|" + r.Header.Get("X-Key")
		}
	}))
	defer srv.Close()
	e := newEnv(t)
	for _, follow := range []bool{false, true} {
		r1 := loopRule(srv.URL)
		r1.PathPrefix = "/a"
		r1.Headers = []SecretHeader{{Name: "Authorization", Value: "Bearer first"}, {Name: "X-Key", Value: "k1"}}
		r1.FollowRedirects = follow
		s := e.session(&Policy{Allow: []Rule{r1, loopRule(other.URL)}})
		_, err := do(s, abi.HTTPRequest{URL: srv.URL + "/a/out", Headers: map[string][]string{"X-Key": {"guest"}}})
		wantReason(t, err, abi.HTTPPolicyRefused)
	}
	r1 := loopRule(srv.URL)
	r1.PathPrefix = "/a"
	r1.Headers = []SecretHeader{{Name: "Authorization", Value: "Bearer first"}, {Name: "X-Key", Value: "k1"}}
	r1.FollowRedirects = true
	r2 := loopRule(srv.URL)
	r2.PathPrefix = "/b"
	r2.Headers = []SecretHeader{{Name: "X-Key", Value: "k2"}}
	s := e.session(&Policy{Allow: []Rule{r1, r2}})
	if _, err := do(s, abi.HTTPRequest{URL: srv.URL + "/a/in", Headers: map[string][]string{"X-Key": {"guest"}}}); err != nil {
		t.Fatal(err)
	}
	if h := <-got; h != "|k2" {
		t.Fatalf("the second rule's destination got %q", h)
	}
}

func TestSecretNeverReachesGuest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		fmt.Fprintf(w, "you sent %q", r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	e := newEnv(t)
	rule := loopRule(srv.URL)
	rule.Headers = []SecretHeader{{Name: "Authorization", Value: "token-9f8e7d"}}
	s := e.session(&Policy{Allow: []Rule{rule}})
	r, err := do(s, abi.HTTPRequest{URL: srv.URL, Headers: map[string][]string{"Authorization": {"guest-value"}}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(r), "token-9f8e7d") || strings.Contains(e.logs.String(), "token-9f8e7d") {
		t.Fatalf("secret leaked: %+v\n%s", r, e.logs)
	}
	if r.Headers["X-Echo"][0] != Redacted || !strings.Contains(r.Body, Redacted) {
		t.Fatalf("echo not redacted: %+v", r)
	}
}

func TestTimeoutAndSize(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-block:
			case <-r.Context().Done():
			}
			return
		}
		w.Write(bytes.Repeat([]byte("a"), 4096))
	}))
	defer srv.Close()
	defer close(block)
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{loopRule(srv.URL)}, Limits: Limits{BytesIn: 6000, Timeout: 5 * time.Second}})
	_, err := do(s, abi.HTTPRequest{URL: srv.URL + "/slow", TimeoutMs: 50})
	wantReason(t, err, abi.HTTPTimeout)
	if _, err := do(s, abi.HTTPRequest{URL: srv.URL + "/big"}); err != nil {
		t.Fatal(err)
	}
	_, err = do(s, abi.HTTPRequest{URL: srv.URL + "/big"})
	wantReason(t, err, abi.HTTPTooLarge)
}

func TestFloodAndBytesOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{loopRule(srv.URL)}, Limits: Limits{Requests: 3, BytesOut: 10}})
	for i := 0; i < 3; i++ {
		if _, err := do(s, abi.HTTPRequest{URL: srv.URL}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 50; i++ {
		_, err := do(s, abi.HTTPRequest{URL: srv.URL})
		wantReason(t, err, abi.HTTPPolicyRefused)
	}
	if len(e.dial.dialed) > 3 {
		t.Fatalf("dialled %d times past the limit", len(e.dial.dialed))
	}
	s = e.session(&Policy{Allow: []Rule{loopRule(srv.URL)}, Limits: Limits{BytesOut: 10}})
	_, err := do(s, abi.HTTPRequest{Method: "POST", URL: srv.URL, Body: "01234567890"})
	wantReason(t, err, abi.HTTPPolicyRefused)
}

func TestConcurrencyLimit(t *testing.T) {
	var mu sync.Mutex
	cur, peak := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur++
		peak = max(peak, cur)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		cur--
		mu.Unlock()
	}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{loopRule(srv.URL)}, Limits: Limits{Concurrency: 2}})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := do(s, abi.HTTPRequest{URL: srv.URL}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if peak > 2 {
		t.Fatalf("%d requests in flight; the limit is 2", peak)
	}
}

func TestTLSWithTestCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	e := newEnv(t)
	// example.com is in the test certificate; the injected resolver points
	// it at loopback, which the policy names.
	e.dns["example.com"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	e.dns["wrong.test"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	rules := []Rule{{Scheme: "https", Host: "example.com", Port: port}, {Scheme: "https", Host: "wrong.test", Port: port}}
	loop := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	s := e.session(&Policy{Allow: rules, Networks: loop, CABundle: ca})
	r, err := do(s, abi.HTTPRequest{URL: fmt.Sprintf("https://example.com:%d/", port)})
	if err != nil || r.Body != "secure" {
		t.Fatalf("%+v %v", r, err)
	}
	_, err = do(s, abi.HTTPRequest{URL: fmt.Sprintf("https://wrong.test:%d/", port)})
	wantReason(t, err, abi.HTTPTLS)
	// Without the bundle, the test CA is not trusted.
	s = e.session(&Policy{Allow: rules, Networks: loop})
	_, err = do(s, abi.HTTPRequest{URL: fmt.Sprintf("https://example.com:%d/", port)})
	wantReason(t, err, abi.HTTPTLS)
}

// TestSSRFRefusedWithoutDialling: names resolving to special addresses,
// and literal special addresses, are refused before any dial.
func TestSSRFRefusedWithoutDialling(t *testing.T) {
	e := newEnv(t)
	bad := []string{"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0",
		"224.0.0.1", "100.64.0.1", "::1", "fe80::1", "fc00::1", "::ffff:169.254.169.254", "::ffff:127.0.0.1",
		"64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "ff02::1", "::"}
	e.dial.refuse = map[netip.Addr]bool{}
	var rules []Rule
	for i, a := range bad {
		name := fmt.Sprintf("h%d.test", i)
		addr := netip.MustParseAddr(a)
		e.dns[name] = []netip.Addr{addr}
		e.dial.refuse[addr.Unmap()] = true
		rules = append(rules, Rule{Scheme: "http", Host: name})
	}
	rules = append(rules, Rule{Scheme: "http", Host: "*.evil.test"})
	s := e.session(&Policy{Allow: rules})
	for i, a := range bad {
		_, err := do(s, abi.HTTPRequest{URL: fmt.Sprintf("http://h%d.test/", i)})
		wantReason(t, err, abi.HTTPPolicyRefused)
		if !strings.Contains(err.Msg, netip.MustParseAddr(a).Unmap().String()) {
			t.Errorf("%s: message does not name the address: %s", a, err.Msg)
		}
	}
	if len(e.dial.dialed) != 0 {
		t.Fatalf("dialled %v", e.dial.dialed)
	}
}

// TestHostileURLs: the tricks a guest may try to reach an address it was
// not granted, with a policy that allows a public name only.
func TestHostileURLs(t *testing.T) {
	e := newEnv(t)
	e.dns["allowed.test"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	e.dial.refuse = map[netip.Addr]bool{netip.MustParseAddr("127.0.0.1"): true}
	s := e.session(&Policy{Allow: []Rule{{Scheme: "http", Host: "allowed.test", Methods: []string{"GET"}}}})
	for _, u := range []string{
		"http://allowed.test@127.0.0.1/",
		"http://allowed.test:x@evil.test/",
		"http://127.0.0.1#@allowed.test/",
		"http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://0x7f.0.0.1/", "http://127.1/",
		"http://[::1]/", "http://[0:0:0:0:0:0:0:1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/",
		"http://[fe80::1%25eth0]/", "http://169.254.169.254/",
		"http://allowed.test.evil.test/", "http://evil.test/allowed.test",
		"http://allowed.test\\@evil.test/",
		"ftp://allowed.test/", "file:///etc/passwd", "gopher://allowed.test/",
	} {
		_, err := do(s, abi.HTTPRequest{URL: u})
		if err == nil || (err.Reason != abi.HTTPPolicyRefused && err.Reason != abi.HTTPInvalid) {
			t.Errorf("%s: want a refusal, got %v", u, err)
		}
	}
	// Allowed names in other spellings are still checked by address: the
	// guard refuses loopback for allowed.test (the policy names no
	// network), and the dialer never sees it.
	for _, u := range []string{"http://ALLOWED.TEST/", "http://allowed.test./", "HTTP://Allowed.Test:80/"} {
		_, err := do(s, abi.HTTPRequest{URL: u})
		wantReason(t, err, abi.HTTPPolicyRefused)
		if !strings.Contains(err.Msg, "resolves to 127.0.0.1") {
			t.Errorf("%s: the name did not match the rule (%s)", u, err.Msg)
		}
	}
	// CR/LF in a header value or name, a Host header.
	for _, h := range []map[string][]string{
		{"X-A": {"v\r\nX-Injected: 1"}}, {"X-A": {"v\nb"}}, {"X-A\r\nB": {"v"}}, {"Host": {"evil.test"}}, {"X-A": {"\x00"}},
	} {
		_, err := do(s, abi.HTTPRequest{URL: "http://allowed.test/", Headers: h})
		wantReason(t, err, abi.HTTPInvalid)
	}
	_, err := do(s, abi.HTTPRequest{URL: "http://allowed.test/\r\nX: y"})
	wantReason(t, err, abi.HTTPInvalid)
	if len(e.dial.dialed) != 0 {
		t.Fatalf("dialled %v", e.dial.dialed)
	}
}

func TestNetworksGrant(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	e := newEnv(t)
	e.dns["svc.internal"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	rule := Rule{Scheme: "http", Host: "svc.internal", Port: port}
	s := e.session(&Policy{Allow: []Rule{rule}})
	_, err := do(s, abi.HTTPRequest{URL: fmt.Sprintf("http://svc.internal:%d/", port)})
	wantReason(t, err, abi.HTTPPolicyRefused)
	s = e.session(&Policy{Allow: []Rule{rule}, Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if r, err := do(s, abi.HTTPRequest{URL: fmt.Sprintf("http://svc.internal:%d/", port)}); err != nil || r.Body != "ok" {
		t.Fatalf("%+v %v", r, err)
	}
	_, err = do(s, abi.HTTPRequest{URL: fmt.Sprintf("http://nosuch.internal:%d/", port)})
	wantReason(t, err, abi.HTTPPolicyRefused)
	s = e.session(&Policy{Allow: []Rule{{Scheme: "http", Host: "nosuch.internal"}}})
	_, err = do(s, abi.HTTPRequest{URL: "http://nosuch.internal/"})
	wantReason(t, err, abi.HTTPDNS)
}

func TestRealDialerControlRefuses(t *testing.T) {
	g := &guard{}
	if err := g.control("tcp", "127.0.0.1:80", nil); err == nil {
		t.Fatal("control let loopback through")
	}
	if err := g.control("tcp", "[::ffff:169.254.169.254]:80", nil); err == nil {
		t.Fatal("control let mapped metadata through")
	}
	if err := g.control("tcp", "93.184.216.34:443", nil); err != nil {
		t.Fatal(err)
	}
}

func TestObserverSeesEveryRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/t", http.StatusTemporaryRedirect)
		case "/gone":
			w.WriteHeader(404)
		default:
			w.WriteHeader(201)
			io.WriteString(w, "héllo")
		}
	}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{loopRule(srv.URL)}, Limits: Limits{BytesIn: 10}})
	if _, err := do(s, abi.HTTPRequest{Method: "POST", URL: srv.URL + "/moved", Body: "payload"}); err != nil {
		t.Fatal(err)
	}
	if _, err := do(s, abi.HTTPRequest{URL: srv.URL + "/gone"}); err != nil {
		t.Fatal(err)
	}
	_, err := do(s, abi.HTTPRequest{URL: "http://example.test/"})
	wantReason(t, err, abi.HTTPPolicyRefused)
	_, err = do(s, abi.HTTPRequest{Method: "GET\r\n", URL: srv.URL})
	wantReason(t, err, abi.HTTPInvalid)
	_, err = do(s, abi.HTTPRequest{URL: srv.URL + "/t"}) // 6 more bytes: past max_bytes_in
	wantReason(t, err, abi.HTTPTooLarge)

	got := e.done.list
	if len(got) != 5 {
		t.Fatalf("observer saw %d requests, want 5: %+v", len(got), got)
	}
	for i, d := range got {
		if d.Module != "mod" || d.Duration <= 0 && d.Outcome == "ok" {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	// The redirect's 307 keeps the body: 7 bytes out twice.
	want := []Done{
		{Module: "mod", Method: "POST", Outcome: "ok", Status: 201, BytesOut: 14, BytesIn: 6},
		{Module: "mod", Method: "GET", Outcome: "ok", Status: 404, BytesOut: 0, BytesIn: 0},
		{Module: "mod", Method: "GET", Outcome: abi.HTTPPolicyRefused},
		{Module: "mod", Outcome: abi.HTTPInvalid}, // refused before its method was taken
		{Module: "mod", Method: "GET", Outcome: abi.HTTPTooLarge, Status: 201, BytesIn: 5},
	}
	for i := range want {
		g := got[i]
		if g.Start.IsZero() || g.Start.After(time.Now()) {
			t.Fatalf("request %d: start %v", i, g.Start)
		}
		g.Start, g.Duration = time.Time{}, 0
		if g != want[i] {
			t.Fatalf("request %d: got %+v, want %+v", i, g, want[i])
		}
	}
}
