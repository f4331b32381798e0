package egress

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// jsonStyles are the ways common servers' JSON encoders escape a string:
// PHP's json_encode escapes "/" as "\/" and nothing of HTML; .NET's
// System.Text.Json escapes + < > & ' as upper-case \u00XX; Go escapes
// < > & as lower-case \u00XX.
func jsonStyles(s string) map[string]string {
	php := strings.ReplaceAll(s, "/", `\/`)
	var net strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`+<>&'`, r) {
			fmt.Fprintf(&net, `\u%04X`, r)
		} else {
			net.WriteRune(r)
		}
	}
	upperGo := strings.NewReplacer("<", `\u003C`, ">", `\u003E`, "&", `\u0026`).Replace(s)
	return map[string]string{"php": php, "dotnet": net.String(), "go upper hex": upperGo,
		"php html": strings.NewReplacer("<", `\u003C`, ">", `\u003E`, "&", `\u0026`, "/", `\/`).Replace(s)}
}

// TestSecretEchoOtherEncoders (outside review): an endpoint whose JSON or
// HTML encoder escapes the token differently from Go's — PHP's "\/",
// .NET's upper-case \u002B, an HTML page's &lt;&amp; — repeats it in a
// form the guest can undo. Before, each of these reached the guest.
func TestSecretEchoOtherEncoders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		w.Header().Set("Content-Type", "text/plain")
		for name, form := range jsonStyles(tok) {
			fmt.Fprintf(w, "%s={\"token\":\"%s\"}\n", name, form)
		}
		fmt.Fprintf(w, "html=<p>%s</p>\n", html.EscapeString(tok))
		fmt.Fprintf(w, "html2=<p>%s</p>\n", strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace(tok))
	}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, false)}})
	r, err := do(s, abi.HTTPRequest{URL: srv.URL + "/echo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.Body), "\n") {
		if !strings.Contains(line, Redacted) {
			t.Errorf("not redacted: %s", line)
		}
	}
	// What a guest makes of each line once it undoes the escaping.
	undo := strings.NewReplacer(`\/`, "/", `\u002B`, "+", `\u003C`, "<", `\u003E`, ">", `\u0026`, "&", `\u0027`, "'",
		"&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`, "&#x27;", "'", "&#39;", "'", "&#34;", `"`)
	wantNoSecret(t, "undone", undo.Replace(r.Body))
}

// TestSecretRedirectOtherOrigins (outside review): with follow_redirects,
// a secret-bearing request redirected to the same host on another port,
// to another scheme, or to another name of the same address is not
// followed — the other listener is never asked — while the same origin
// spelled differently (upper-case scheme, a default-port-free spelling)
// still is.
func TestSecretRedirectOtherOrigins(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		io.WriteString(w, "other "+r.Header.Get("Authorization"))
	}))
	defer other.Close()
	var to string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			w.Header().Set("Location", to)
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, "landed")
	}))
	defer srv.Close()
	su, _ := url.Parse(srv.URL)
	ou, _ := url.Parse(other.URL)
	e := newEnv(t)
	for _, loc := range []string{
		"http://127.0.0.1:" + ou.Port() + "/x",
		"https://127.0.0.1:" + su.Port() + "/x",
		"http://localhost:" + su.Port() + "/x",
		"//127.0.0.1:" + ou.Port() + "/x",
		"http://127.0.0.1:" + su.Port() + "@127.0.0.1:" + ou.Port() + "/x",
		"http://127.0.0.1:0" + su.Port() + "/x",
		"http://127.0.0.1:" + su.Port() + "\\@127.0.0.1:" + ou.Port() + "/x",
	} {
		to = loc
		s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, true), loopRule(other.URL), {Scheme: "https", Host: "127.0.0.1", Port: mustPort(su.Port()), Methods: []string{"GET"}}}})
		r, err := do(s, abi.HTTPRequest{URL: srv.URL + "/go"})
		if err == nil {
			t.Errorf("redirect to %s followed: %+v", loc, r)
			continue
		}
		wantNoSecret(t, loc, err.Msg)
	}
	if n := otherHits.Load(); n != 0 {
		t.Fatalf("the other listener was asked %d times", n)
	}
	for _, loc := range []string{"HTTP://127.0.0.1:" + su.Port() + "/land", "/land", "http://127.0.0.1:" + su.Port() + "/./land"} {
		to = loc
		s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, true)}})
		if r, err := do(s, abi.HTTPRequest{URL: srv.URL + "/go"}); err != nil || r.Body != "landed" {
			t.Errorf("same-origin redirect to %s: %+v %v", loc, r, err)
		}
	}
}

func mustPort(p string) int {
	n, err := strconv.Atoi(p)
	if err != nil {
		panic(err)
	}
	return n
}

// TestSecretStackedCodingsAndCookies (outside review): the echo gzip
// inside deflate (Content-Encoding: deflate, gzip), and the token in a
// Set-Cookie, are decoded and redacted.
func TestSecretStackedCodingsAndCookies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		_, tok, _ := strings.Cut(auth, " ")
		http.SetCookie(w, &http.Cookie{Name: "t", Value: url.QueryEscape(tok)})
		w.Header().Add("Set-Cookie", "raw="+tok)
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		io.WriteString(zw, "auth="+auth+"\n")
		zw.Close()
		var g bytes.Buffer
		gw := gzip.NewWriter(&g)
		gw.Write(z.Bytes())
		gw.Close()
		w.Header().Set("Content-Encoding", "deflate, gzip")
		w.Write(g.Bytes())
	}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, false)}})
	r, err := do(s, abi.HTTPRequest{URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	view := guestView(t, r)
	wantNoSecret(t, "stacked", view)
	if r.Body != "auth="+Redacted+"\n" {
		t.Errorf("body %q", r.Body)
	}
}

// TestSecretPathParamTraversal (outside review): a rule bound to a path
// prefix carries its secret only under that prefix. Servers that read a
// ";" as the start of path parameters (Tomcat, Jetty, Spring) take
// "/v1/..;/admin" as "/admin": a guest could send the secret to a path
// the operator did not bind. Before, "..;" passed the dot-segment check.
func TestSecretPathParamTraversal(t *testing.T) {
	e := newEnv(t)
	r := Rule{Scheme: "http", Host: "127.0.0.1", Port: 8080, PathPrefix: "/v1/", Methods: []string{"GET"},
		Headers: []SecretHeader{{Name: "Authorization", Value: bearerValue}}}
	s := e.session(&Policy{Allow: []Rule{r}})
	for _, p := range []string{"/v1/..;/admin", "/v1/..;x=1/admin", "/v1/.;/x", "/v1/%2e%2e;/admin", "/v1/.%2E;jsessionid=1/admin"} {
		if _, e := s.check("http://127.0.0.1:8080"+p, "GET"); e == nil || e.Reason != abi.HTTPPolicyRefused {
			t.Errorf("%s: %v, want policy_refused", p, e)
		}
	}
	for _, p := range []string{"/v1/a;b/c", "/v1/x;..", "/v1/...;/x"} {
		if _, e := s.check("http://127.0.0.1:8080"+p, "GET"); e != nil {
			t.Errorf("%s: %v", p, e)
		}
	}
}
