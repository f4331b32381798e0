package tests

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestOutboundHTTP serves the fetch example with a policy that allows one
// loopback server, and drives it over stdio: a page comes back as Markdown,
// a destination outside the list is refused, a secret header reaches the
// server but not the guest, `wasmcp inspect` shows the allow-list without
// the secret, and each request leaves an audit line in the log.
func TestOutboundHTTP(t *testing.T) {
	page := `<html><body><h1>Outbound</h1><p>Reached <a href="/next">through the host</a>.</p></body></html>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "token=%s", r.Header.Get("X-Token"))
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, page)
		}
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the server outside the allow-list got a request: %s", r.URL)
	}))
	defer other.Close()
	u, _ := url.Parse(srv.URL)

	dir := t.TempDir()
	wasm, err := os.ReadFile(filepath.Join(exampleTools(t), "fetch.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	deployFile(t, dir, "fetch.wasm", wasm)
	policy := fmt.Sprintf(`
[http]
max_requests = 4

[[http.allow]]
scheme = "http"
host = "127.0.0.1"
port = %s
headers = { X-Token = "s3cr3t-literal-value" }
`, u.Port())
	deployFile(t, dir, "fetch.policy.toml", []byte(policy))

	out, err := exec.Command(wasmcpBin, "inspect", "--cache-dir", compileCache, filepath.Join(dir, "fetch.wasm")).CombinedOutput()
	if err != nil {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"rule": "GET,HEAD http://127.0.0.1:`+u.Port()+`/"`) || !strings.Contains(string(out), `"X-Token": "literal"`) {
		t.Fatalf("inspect does not show the allow-list:\n%s", out)
	}
	if strings.Contains(string(out), "s3cr3t") {
		t.Fatalf("inspect shows the secret:\n%s", out)
	}

	s := startServe(t, "--tools", dir, "--cache-dir", compileCache, "--watch=false", "--metrics-addr", "127.0.0.1:0")
	c := newStdioClient(t, s)
	res := c.request("tools/call", fmt.Sprintf(`{"name":"fetch","arguments":{"url":%q}}`, srv.URL+"/page"), nil)
	if !strings.Contains(res, `# Outbound`) || !strings.Contains(res, `[through the host](http://127.0.0.1:`+u.Port()+`/next)`) {
		t.Fatalf("fetch: %s", res)
	}
	res = c.request("tools/call", fmt.Sprintf(`{"name":"fetch","arguments":{"url":%q}}`, srv.URL+"/echo"), nil)
	if !strings.Contains(res, "token=[REDACTED]") || strings.Contains(res, "s3cr3t") {
		t.Fatalf("echo: %s", res)
	}
	res = c.request("tools/call", fmt.Sprintf(`{"name":"fetch","arguments":{"url":%q}}`, other.URL+"/"), nil)
	if !strings.Contains(res, `"isError":true`) || !strings.Contains(res, "policy_refused") {
		t.Fatalf("outside the list: %s", res)
	}
	// Refusals of private and metadata addresses are tested in
	// internal/egress with an injected resolver and dialer: this test,
	// with the real dialer, names loopback destinations only.
	// The log reaches us through a pipe, so the last line may trail the
	// reply it belongs to.
	waitFor(t, 10*time.Second, "three outbound audit lines", func() bool {
		return strings.Count(s.Stderr.String(), `msg="outbound http"`) >= 3
	})
	logs := s.Stderr.String()
	if !strings.Contains(logs, "module=fetch") || strings.Contains(logs, "s3cr3t") {
		t.Fatalf("audit lines:\n%s", logs)
	}
	// The same three requests in the metrics: two answered 200, one
	// refused by the policy; bytes in and a duration for each.
	m := regexp.MustCompile(`msg="serving metrics and probes" url=(http://\S+)/metrics`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no metrics listener in the log:\n%s", logs)
	}
	fams := scrape(t, m[1])
	for _, c := range []struct {
		outcome, status string
		want            float64
	}{{"ok", "2xx", 2}, {"policy_refused", "none", 1}} {
		if got := value(fams, "wasmcp_outbound_requests_total", map[string]string{"module": "fetch", "outcome": c.outcome, "status": c.status}); got != c.want {
			t.Errorf("wasmcp_outbound_requests_total{module=fetch,outcome=%s,status=%s} = %v, want %v", c.outcome, c.status, got, c.want)
		}
	}
	if got := value(fams, "wasmcp_outbound_bytes_total", map[string]string{"module": "fetch", "direction": "in"}); got != float64(len(page)+len("token=s3cr3t-literal-value")) {
		t.Errorf("wasmcp_outbound_bytes_total{direction=in} = %v, want %d", got, len(page)+len("token=s3cr3t-literal-value"))
	}
	if got := value(fams, "wasmcp_outbound_request_duration_seconds", map[string]string{"module": "fetch"}); got != 3 {
		t.Errorf("wasmcp_outbound_request_duration_seconds count = %v, want 3", got)
	}
}
