package egress

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// The secrets of these tests, chosen with characters that URL-encoding,
// base64 and JSON each change.
const (
	bearerToken = "tok-7Hq2/x+Zk9=<&"
	bearerValue = "Bearer " + bearerToken
	apiKey      = "key-4f1c9e2b8a"
	basicUser   = "alice"
	basicPass   = "pa55-w0rd/x"
)

var basicValue = "Basic " + base64.StdEncoding.EncodeToString([]byte(basicUser+":"+basicPass))

// secretStrings are the strings a guest must never find in what it is
// handed: every secret, its credential part, and the trivial encodings the
// host promises to cover.
func secretStrings() []string {
	var out []string
	for _, s := range []string{bearerValue, bearerToken, apiKey, basicValue, basicUser + ":" + basicPass, basicPass} {
		j, _ := json.Marshal(s)
		out = append(out, s, url.QueryEscape(s), url.PathEscape(s),
			base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s)),
			strings.Trim(string(j), `"`))
	}
	return out
}

// guestView is everything a guest can read in a response, a compressed
// body decompressed as an attacking guest would.
func guestView(t *testing.T, r *abi.HTTPResponse) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "status %d url %s\n", r.Status, r.URL)
	for k, vs := range r.Headers {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(vs, ", "))
	}
	body := []byte(r.Body)
	if r.BodyBase64 != "" {
		body, _ = base64.StdEncoding.DecodeString(r.BodyBase64)
	}
	for i := 0; i < 4 && len(body) > 2 && body[0] == 0x1f && body[1] == 0x8b; i++ {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			break
		}
		body, _ = io.ReadAll(zr)
	}
	b.Write(body)
	return b.String()
}

func wantNoSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range secretStrings() {
		if strings.Contains(text, s) {
			t.Errorf("%s: the guest can read %q in:\n%s", what, s, text)
		}
	}
}

// echo writes back every way an endpoint might repeat what it was sent.
func echo(w http.ResponseWriter, r *http.Request) {
	auth, key := r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")
	_, tok, _ := strings.Cut(auth, " ")
	w.Header().Set("X-Token", tok)
	w.Header().Set("X-Echo-Auth", auth)
	w.Header().Set("X-Echo-Key", key)
	w.Header().Set("Content-Type", "text/plain")
	var b bytes.Buffer
	fmt.Fprintf(&b, "auth=%s\ntoken=%s\nkey=%s\n", auth, tok, key)
	fmt.Fprintf(&b, "q=%s\np=%s\nqk=%s\n", url.QueryEscape(tok), url.PathEscape(tok), url.QueryEscape(auth))
	fmt.Fprintf(&b, "b64=%s\nb64t=%s\nb64u=%s\nb64k=%s\n", base64.StdEncoding.EncodeToString([]byte(auth)),
		base64.StdEncoding.EncodeToString([]byte(tok)), base64.RawURLEncoding.EncodeToString([]byte(tok)),
		base64.StdEncoding.EncodeToString([]byte(key)))
	j, _ := json.Marshal(map[string]string{"authorization": auth, "token": tok})
	fmt.Fprintf(&b, "json=%s\n", j)
	if dec, err := base64.StdEncoding.DecodeString(tok); err == nil {
		user, pass, _ := strings.Cut(string(dec), ":")
		fmt.Fprintf(&b, "basic=%s\nuser=%s\npass=%s\n", dec, user, pass)
	}
	force := r.URL.Query().Has("gzip")
	if force || strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(b.Bytes())
		zw.Close()
		return
	}
	w.Write(b.Bytes())
}

func secretRule(srvURL string, follow bool) Rule {
	r := loopRule(srvURL)
	r.Headers = []SecretHeader{{Name: "Authorization", Value: bearerValue}, {Name: "X-Api-Key", Value: apiKey}}
	r.FollowRedirects = follow
	return r
}

// TestSecretGzipEcho (issue 25, 1): a guest that asks for gzip itself, or
// a server that compresses unasked, must not get the secret compressed past
// the redaction.
func TestSecretGzipEcho(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, false)}})
	for _, c := range []struct {
		name string
		req  abi.HTTPRequest
	}{
		{"guest asks for gzip", abi.HTTPRequest{URL: srv.URL + "/echo", Headers: map[string][]string{"Accept-Encoding": {"gzip"}}}},
		{"guest asks for gzip, deflate, br", abi.HTTPRequest{URL: srv.URL + "/echo", Headers: map[string][]string{"accept-encoding": {"gzip, deflate, br"}}}},
		{"server compresses unasked", abi.HTTPRequest{URL: srv.URL + "/echo?gzip", Headers: map[string][]string{"Accept-Encoding": {"identity"}}}},
	} {
		r, err := do(s, c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		wantNoSecret(t, c.name, guestView(t, r))
		if !strings.Contains(r.Body, "auth="+Redacted) || r.Headers["Content-Encoding"] != nil {
			t.Errorf("%s: the body did not arrive decompressed and redacted: %+v", c.name, r)
		}
	}
}

// TestGzipBombHitsCap (issue 25, 1): the response size cap counts the
// decompressed bytes, whoever asked for the compression and however the
// server names it.
func TestGzipBombHitsCap(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write(make([]byte, 16<<20))
	zw.Close()
	var twice bytes.Buffer
	zw, _ = gzip.NewWriterLevel(&twice, gzip.BestCompression)
	zw.Write(bomb.Bytes())
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc := r.URL.Query().Get("enc")
		w.Header().Set("Content-Encoding", enc)
		if enc == "gzip, gzip" {
			w.Write(twice.Bytes())
			return
		}
		w.Write(bomb.Bytes())
	}))
	defer srv.Close()
	e := newEnv(t)
	for _, c := range []struct {
		enc string
		hdr map[string][]string
	}{
		{"gzip", nil},
		{"gzip", map[string][]string{"Accept-Encoding": {"gzip"}}},
		{"x-gzip", map[string][]string{"Accept-Encoding": {"gzip"}}},
		{"gzip, gzip", map[string][]string{"Accept-Encoding": {"gzip"}}},
	} {
		// A session of its own each: the cap is the call's.
		s := e.session(&Policy{Allow: []Rule{loopRule(srv.URL)}, Limits: Limits{BytesIn: 1 << 20}})
		_, err := do(s, abi.HTTPRequest{URL: srv.URL + "/?enc=" + url.QueryEscape(c.enc), Headers: c.hdr})
		wantReason(t, err, abi.HTTPTooLarge)
	}
}

// TestSecretEchoForms (issue 25, 2): an endpoint that repeats the token
// without its scheme, URL-encoded, base64-encoded, JSON-escaped, or the
// user:password of Basic auth, does not hand it to the guest.
func TestSecretEchoForms(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	basic := httptest.NewServer(http.HandlerFunc(echo))
	defer basic.Close()
	e := newEnv(t)
	br := loopRule(basic.URL)
	br.Headers = []SecretHeader{{Name: "Authorization", Value: basicValue}}
	s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, false), br}})
	for _, u := range []string{srv.URL + "/echo", basic.URL + "/echo"} {
		r, err := do(s, abi.HTTPRequest{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		view := guestView(t, r)
		wantNoSecret(t, u, view)
		if !strings.Contains(view, "token="+Redacted) {
			t.Errorf("%s: the token was not redacted:\n%s", u, view)
		}
	}
}

// TestSecretRedirect (issue 25, 3): a request carrying a secret is not
// redirected by default; with follow_redirects it is, on the same host
// only, and the final URL handed to the guest is redacted.
func TestSecretRedirect(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		io.WriteString(w, "other")
	}))
	defer other.Close()
	var landHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := url.QueryEscape(r.Header.Get("X-Api-Key"))
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/land?key="+key+"&auth="+url.QueryEscape(r.Header.Get("Authorization")), http.StatusFound)
		case "/off":
			http.Redirect(w, r, other.URL+"/x?key="+key, http.StatusFound)
		default:
			landHits.Add(1)
			io.WriteString(w, "landed")
		}
	}))
	defer srv.Close()
	e := newEnv(t)

	s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, false), loopRule(other.URL)}})
	_, err := do(s, abi.HTTPRequest{URL: srv.URL + "/start"})
	wantReason(t, err, abi.HTTPPolicyRefused)
	wantNoSecret(t, "default refusal", err.Msg)
	if landHits.Load() != 0 {
		t.Fatalf("the redirect of a secret-bearing request was followed by default")
	}

	s = e.session(&Policy{Allow: []Rule{secretRule(srv.URL, true), loopRule(other.URL)}})
	r, err := do(s, abi.HTTPRequest{URL: srv.URL + "/start"})
	if err != nil || r.Body != "landed" {
		t.Fatalf("same-host redirect with follow_redirects: %+v %v", r, err)
	}
	wantNoSecret(t, "final url", guestView(t, r))
	if !strings.Contains(r.URL, "/land?key="+Redacted) {
		t.Errorf("final url %q", r.URL)
	}
	_, err = do(s, abi.HTTPRequest{URL: srv.URL + "/off"})
	wantReason(t, err, abi.HTTPPolicyRefused)
	wantNoSecret(t, "off-host refusal", err.Msg)
	if otherHits.Load() != 0 {
		t.Fatalf("a secret-bearing request was redirected to another host")
	}
}

// TestErrorsNeverQuoteSecret (issue 25, 4): a redirect refused, a bad
// Location, a malformed status line: the error names the host, never the
// URL, header or status line that carried the secret.
func TestErrorsNeverQuoteSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Api-Key")
		switch r.URL.Path {
		case "/api/out":
			w.Header().Set("Location", "/forbidden/"+key)
			w.WriteHeader(http.StatusFound)
		case "/api/badloc":
			w.Header().Set("Location", "http://127.0.0.1/%zz"+key)
			w.WriteHeader(http.StatusFound)
		}
	}))
	defer srv.Close()
	// A server that answers with a status line holding the key.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				fmt.Fprintf(c, "HTTP/1.1 2%s OK\r\nContent-Length: 0\r\n\r\n", req.Header.Get("X-Api-Key"))
			}()
		}
	}()
	bad := "http://" + ln.Addr().String()
	e := newEnv(t)
	for _, follow := range []bool{false, true} {
		rule := secretRule(srv.URL, follow)
		rule.PathPrefix = "/api"
		s := e.session(&Policy{Allow: []Rule{rule, secretRule(bad, follow)}})
		for _, u := range []string{srv.URL + "/api/out", srv.URL + "/api/badloc", bad + "/"} {
			_, err := do(s, abi.HTTPRequest{URL: u})
			if err == nil {
				t.Fatalf("%s: want an error", u)
			}
			wantNoSecret(t, fmt.Sprintf("%s (follow %v)", u, follow), err.Msg)
			if !strings.Contains(err.Msg, "127.0.0.1") {
				t.Errorf("%s: the error does not name the host: %s", u, err.Msg)
			}
		}
	}
	if strings.Contains(e.logs.String(), apiKey) {
		t.Errorf("the key reached the log:\n%s", e.logs)
	}
}

// TestSecretRangeDropped (issue 36, 8): a guest's Range (or If-Range,
// Accept-Charset, A-IM) on a request carrying a host-held secret would
// slice or re-encode an echo of the secret past the redaction; the host
// drops them there, so the server answers the whole body, redacted. A
// request without a secret keeps them.
func TestSecretRangeDropped(t *testing.T) {
	var gotRange atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotRange.Store(r.Header.Get("Range") + "|" + r.Header.Get("If-Range") + r.Header.Get("Accept-Charset") + r.Header.Get("A-IM"))
		body := "token=" + r.Header.Get("Authorization") + "\n"
		http.ServeContent(w, r, "echo.txt", time.Unix(1e9, 0), strings.NewReader(body))
	}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, false)}})
	var whole strings.Builder
	for off := 0; off < 60; off += 10 {
		for _, h := range []map[string][]string{
			{"Range": {fmt.Sprintf("bytes=%d-%d", off, off+9)}},
			{"range": {fmt.Sprintf("bytes=%d-%d", off, off+9)}, "If-Range": {time.Unix(1e9, 0).UTC().Format(http.TimeFormat)}},
			{"Accept-Charset": {"utf-16"}, "A-IM": {"vcdiff"}},
		} {
			r, err := do(s, abi.HTTPRequest{URL: srv.URL + "/echo", Headers: h})
			if err != nil {
				t.Fatal(err)
			}
			if got := gotRange.Load().(string); got != "|" {
				t.Fatalf("the server got Range|If-Range %q on a request carrying a secret", got)
			}
			if r.Status != http.StatusOK || !strings.Contains(r.Body, "token="+Redacted) {
				t.Fatalf("want the whole body redacted, got %d %q", r.Status, r.Body)
			}
			whole.WriteString(guestView(t, r))
		}
	}
	wantNoSecret(t, "ranges", whole.String())

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "x.txt", time.Unix(1e9, 0), strings.NewReader("0123456789abcdef"))
	}))
	defer plain.Close()
	s = e.session(&Policy{Allow: []Rule{loopRule(plain.URL)}})
	r, err := do(s, abi.HTTPRequest{URL: plain.URL + "/x", Headers: map[string][]string{"Range": {"bytes=2-4"}}})
	if err != nil || r.Status != http.StatusPartialContent || r.Body != "234" {
		t.Fatalf("a Range without a secret: %+v %v", r, err)
	}
}
