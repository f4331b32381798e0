package tests

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

var netprobe built[[]byte]

// netprobeWasm builds the host tests' outbound HTTP guest
// (host/testdata/guests/netprobe), whose view tool returns everything a
// guest can read of an answer, a gzip body gunzipped.
func netprobeWasm(t *testing.T) []byte {
	t.Helper()
	return netprobe.get(t, func() ([]byte, error) {
		out := filepath.Join(workDir, "netprobe", "netprobe.wasm")
		if err := guestbuild.Build(context.Background(), "../host/testdata/guests/netprobe", out); err != nil {
			return nil, err
		}
		return os.ReadFile(out)
	})
}

// TestOutboundSecretsStayWithTheHost (issue 25): a guest served by wasmcp
// tries to read the secret headers its policy injects for a destination
// that echoes requests: through a gzip body it asks for itself, through
// the token without its scheme, and through the URL of a redirect that
// carries the key. It reads none of them, and the refused redirect is
// never followed.
func TestOutboundSecretsStayWithTheHost(t *testing.T) {
	const token, key = "e2e-tok-5d1f8a2c9b", "e2e-key-77c3a1e0"
	t.Setenv("WASMCP_E2E_EGRESS_TOKEN", token)
	var landed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start", "/f/start":
			http.Redirect(w, r, "land?key="+url.QueryEscape(r.Header.Get("X-Api-Key")), http.StatusFound)
			return
		case "/land":
			landed.Add(1)
		}
		auth := r.Header.Get("Authorization")
		_, tok, _ := strings.Cut(auth, " ")
		w.Header().Set("X-Token", tok)
		body := fmt.Sprintf("auth=%s\ntoken=%s\nkey=%s\n", auth, tok, r.Header.Get("X-Api-Key"))
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, body)
			zw.Close()
			return
		}
		io.WriteString(w, body)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	dir := t.TempDir()
	deployFile(t, dir, "netprobe.wasm", netprobeWasm(t))
	// The same secrets under /f/, where the operator lets redirects be
	// followed (same host only).
	deployFile(t, dir, "netprobe.policy.toml", []byte(fmt.Sprintf(`
[http]
[[http.allow]]
scheme = "http"
host = "127.0.0.1"
port = %[1]s
path = "/f/"
follow_redirects = true
headers = { Authorization = { from = "WASMCP_E2E_EGRESS_TOKEN", prefix = "Bearer " }, X-Api-Key = %[2]q }

[[http.allow]]
scheme = "http"
host = "127.0.0.1"
port = %[1]s
headers = { Authorization = { from = "WASMCP_E2E_EGRESS_TOKEN", prefix = "Bearer " }, X-Api-Key = %[2]q }
`, u.Port(), key)))
	s := startServe(t, "--tools", dir, "--cache-dir", compileCache, "--watch=false")
	c := newStdioClient(t, s)
	view := func(path string, headers string) string {
		return c.request("tools/call", fmt.Sprintf(`{"name":"view","arguments":{"url":%q,"headers":%s}}`, srv.URL+path, headers), nil)
	}
	for _, leak := range []struct{ name, res string }{
		{"gzip the guest asked for", view("/echo", `{"Accept-Encoding":["gzip"]}`)},
		{"the token alone", view("/echo", `{}`)},
		{"a redirect carrying the key", view("/start", `{}`)},
		{"a followed redirect carrying the key", view("/f/start", `{}`)},
	} {
		if strings.Contains(leak.res, token) || strings.Contains(leak.res, key) {
			t.Errorf("%s: the guest read a secret:\n%s", leak.name, leak.res)
		}
		t.Logf("%s: %s", leak.name, leak.res)
	}
	if res := view("/echo", `{"Accept-Encoding":["gzip"]}`); !strings.Contains(res, `token=[REDACTED]`) || strings.Contains(res, "[gunzipped]") {
		t.Errorf("the gzip body did not arrive decoded and redacted:\n%s", res)
	}
	if res := view("/start", `{}`); !strings.Contains(res, "reason=policy_refused") || !strings.Contains(res, "follow_redirects") {
		t.Errorf("the redirect of a secret-bearing request was not refused:\n%s", res)
	}
	if res := view("/f/start", `{}`); !strings.Contains(res, "url="+srv.URL+"/f/land?key=[REDACTED]") {
		t.Errorf("the followed redirect's final URL:\n%s", res)
	}
	if landed.Load() != 0 {
		t.Errorf("the redirect carrying the key was followed")
	}
	if strings.Contains(s.Stderr.String(), token) || strings.Contains(s.Stderr.String(), key) {
		t.Errorf("a secret reached the log")
	}
}
