package mcphttp

import (
	"net/http"
	"strings"
	"testing"
)

// alive checks that the server still answers after a refused request.
func (e *env) alive() {
	e.t.Helper()
	if r := e.post(modern("tools/list", ""), `{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{`+meta("")+`}}`); r.status != 200 {
		e.t.Fatalf("the server stopped serving: %d %s", r.status, r.body)
	}
}

func TestOriginAndHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	port := e.ts.Listener.Addr().String()[strings.LastIndexByte(e.ts.Listener.Addr().String(), ':')+1:]
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta("") + `}}`
	hdr := modern("server/discover", "")

	r := e.post(with(hdr, "Origin", "http://evil.example.com"), body)
	if r.status != 403 || r.errorCode(t) == 0 || r.msg(t)["id"] != nil {
		t.Fatalf("bad Origin: %d %s", r.status, r.body)
	}
	e.alive()
	// No browser origin by default, not even a page served from loopback:
	// any local web application could otherwise drive the tools.
	for _, o := range []string{"http://localhost:" + port, "http://127.0.0.1:5173", "https://[::1]"} {
		r := e.post(with(hdr, "Origin", o), body)
		if r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("unlisted loopback Origin %s: %d %v", o, r.status, r.header)
		}
	}
	if r := e.post(with(hdr, "Origin", "null"), body); r.status != 403 {
		t.Fatalf("null Origin: %d", r.status)
	}
	// The server's own origin (the request's scheme, Host and port) is
	// same-origin: allowed, as the conformance DNS-rebinding check wants.
	if r := e.post(with(hdr, "Origin", "http://127.0.0.1:"+port), body); r.status != 200 {
		t.Fatalf("same Origin: %d %s", r.status, r.body)
	}
	if r := e.post(with(hdr, "Origin", "https://127.0.0.1:"+port), body); r.status != 403 {
		t.Fatalf("same host, other scheme: %d", r.status)
	}

	// DNS rebinding: a foreign Host is refused, the loopback names pass.
	req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Host = "evil.example.com:" + port
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("bad Host: %d", resp.StatusCode)
	}
	e.alive()
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "localhost"} {
		req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		req.Host = host
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("Host %s: %d", host, resp.StatusCode)
		}
	}
	req, _ = http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
	req.Host = "localhost:1"
	if resp, err := e.ts.Client().Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("wrong port: %v %v", resp.StatusCode, err)
	}

	// A listed browser origin passes, with CORS and its preflight.
	e = newEnv(t, Options{AllowedOrigins: []string{"http://localhost:3000", "https://[::1]"}})
	for _, o := range []string{"http://localhost:3000", "https://[::1]"} {
		r := e.post(with(hdr, "Origin", o), body)
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != o {
			t.Fatalf("listed Origin %s: %d %v", o, r.status, r.header)
		}
	}
	if r := e.post(with(hdr, "Origin", "http://localhost:3001"), body); r.status != 403 {
		t.Fatalf("other port of a listed origin: %d", r.status)
	}
	r = e.do(http.MethodOptions, e.url, map[string]string{"Origin": "http://localhost:3000",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, mcp-param-region"}, "")
	if r.status != 204 || !strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "mcp-param-region") {
		t.Fatalf("preflight: %d %v", r.status, r.header)
	}
	// A browser DPoP client (RFC 9449) sends its proof in a DPoP header.
	r = e.do(http.MethodOptions, e.url, map[string]string{"Origin": "http://localhost:3000",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, dpop, content-type"}, "")
	if r.status != 204 || !strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "dpop") {
		t.Fatalf("DPoP preflight: %d %v", r.status, r.header)
	}
}

func TestConfiguredAllowLists(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{AllowedOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"*"}})
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta("") + `}}`
	if r := e.post(with(modern("server/discover", ""), "Origin", "https://app.example.com:8443"), body); r.status != 200 {
		t.Fatalf("listed origin: %d", r.status)
	}
	if r := e.post(with(modern("server/discover", ""), "Origin", "http://app.example.com"), body); r.status != 403 {
		t.Fatalf("other scheme: %d", r.status)
	}
	if r := e.post(with(modern("server/discover", ""), "Origin", "http://localhost"), body); r.status != 403 {
		t.Fatalf("loopback origin not listed: %d", r.status)
	}
	p := newHostPolicy(nil, "0.0.0.0:80")
	if !p.allow("anything.example") {
		t.Fatal("a non-loopback bind checks Host by default")
	}
	o := newOriginPolicy(nil)
	if o.allow("http://localhost") || o.allow("http://127.0.0.1:8080") || o.allow("null") {
		t.Fatal("an Origin is allowed by default")
	}
}

func TestBodyErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxBody: 1024})
	hdr := modern("tools/list", "")
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 2000) + `",` + meta("") + `}}`
	if r := e.post(hdr, big); r.status != 413 || r.errorCode(t) != -32600 {
		t.Fatalf("oversized: %d %s", r.status, r.body)
	}
	e.alive()
	// Oversized without Content-Length (chunked).
	req, _ := http.NewRequest(http.MethodPost, e.url, struct{ *strings.Reader }{strings.NewReader(big)})
	req.ContentLength = -1
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("oversized chunked: %d", resp.StatusCode)
	}
	e.alive()
	r := e.post(hdr, `{"jsonrpc":"2.0","id":1,"method":`)
	if m := r.msg(t); r.status != 400 || r.errorCode(t) != -32700 || m["id"] != nil {
		t.Fatalf("malformed: %d %s", r.status, r.body)
	}
	e.alive()
	if r := e.post(hdr, ""); r.status != 400 || r.errorCode(t) != -32700 {
		t.Fatalf("empty: %d %s", r.status, r.body)
	}
	deep := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`
	if r := e.post(hdr, deep); r.status != 400 || r.errorCode(t) != -32600 {
		t.Fatalf("deep: %d %s", r.status, r.body)
	}
	e.alive()
	if r := e.post(hdr, `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`); r.status != 400 || r.errorCode(t) != -32600 {
		t.Fatalf("bad envelope: %d %s", r.status, r.body)
	}
	e.alive()
}

func TestSameOrigin(t *testing.T) {
	on := newHostPolicy([]string{"mcp.example.com"}, "0.0.0.0:443")
	off := newHostPolicy(nil, "0.0.0.0:80")
	r, _ := http.NewRequest(http.MethodPost, "http://mcp.example.com/mcp", nil)
	for origin, want := range map[string]bool{
		"http://mcp.example.com":      true,
		"http://MCP.example.com:80":   true,
		"http://mcp.example.com:8080": false,
		"https://mcp.example.com":     false,
		"http://other.example.com":    false,
		"null":                        false,
	} {
		if got := on.sameOrigin(r, origin); got != want {
			t.Errorf("%s: %v", origin, got)
		}
	}
	if off.sameOrigin(r, "http://mcp.example.com") {
		t.Error("same-origin counted without a Host allow-list")
	}
}
