package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/abi"
)

// maxRedirects caps the redirects one request follows.
const maxRedirects = 10

// Redacted replaces an injected secret wherever the response repeats it.
const Redacted = "[REDACTED]"

// Options are the host's side of outbound HTTP, the same for every module.
type Options struct {
	// ProxyFromEnv sends requests through the proxy named by HTTPS_PROXY,
	// HTTP_PROXY and NO_PROXY (the operator's choice; a guest cannot set
	// it). The proxy's own address is trusted; the destination is still
	// checked against the allow-list, and its resolved addresses against
	// the guard before the request is handed to the proxy.
	ProxyFromEnv bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dialer opens connections; nil means a net.Dialer whose Control
	// checks every address again at connect time.
	Dialer Dialer
	// Logger receives the audit lines; nil means slog.Default().
	Logger *slog.Logger
	// Observer, if set, is told of every request a guest asked for, once
	// it ends (metrics, trace spans).
	Observer Observer
}

// Observer is told of each guest request once it ended, redirects
// followed: RequestDone is called once per Session.Do, with the context
// the request was made in (the guest's call, so a trace span can be its
// child).
type Observer interface {
	RequestDone(ctx context.Context, r *Done)
}

// Done is one guest request as an Observer sees it. Its fields are
// bounded sets: no URL, host, header or body.
type Done struct {
	// Module is the module whose guest asked.
	Module string
	// Method is the request's method once checked (upper case), "" when
	// the request was refused before its method was read.
	Method string
	// Outcome is "ok" when a response came back (whatever its status),
	// else the abi.HTTP* reason the request failed for.
	Outcome string
	// Status is the last response's status code (a request that failed
	// after a response keeps it); 0 when none came.
	Status int
	// BytesOut is the request body bytes sent (every hop); BytesIn the
	// response body bytes read.
	BytesOut, BytesIn int64
	// Start is when the request started; Duration is from then to its
	// end, redirects and waiting for a concurrency slot included.
	Start    time.Time
	Duration time.Duration
}

// Client makes the requests of one module's guests. It is built once per
// module and safe for concurrent use.
type Client struct {
	pol      Policy
	limits   Limits
	guard    *guard
	resolver Resolver
	tr       *http.Transport
	log      *slog.Logger
	obs      Observer
	proxied  bool
	// forms are the strings each secret-bearing rule's header values may
	// be repeated in (secretForms), longest first; allForms those of every
	// rule, for error messages and the final URL.
	forms    map[*Rule]*secretSet
	allForms []string
}

// NewClient builds the client of a policy.
func NewClient(p *Policy, o Options) (*Client, error) {
	c := &Client{pol: *p, limits: p.Limits.WithDefaults(), log: o.Logger, resolver: o.Resolver, obs: o.Observer}
	if c.log == nil {
		c.log = slog.Default()
	}
	g := &guard{allowed: append([]netip.Prefix(nil), p.Networks...)}
	for i := range p.Allow {
		if a, ok := p.Allow[i].hostAddr(); ok {
			g.allowed = append(g.allowed, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	c.guard = g
	for i := range c.pol.Allow {
		r := &c.pol.Allow[i]
		var forms []string
		for _, h := range r.Headers {
			forms = append(forms, secretForms(h.Value)...)
		}
		if len(forms) == 0 {
			continue
		}
		if c.forms == nil {
			c.forms = make(map[*Rule]*secretSet)
		}
		c.allForms = append(c.allForms, forms...)
		c.forms[r] = newSecretSet(forms)
	}
	slices.SortStableFunc(c.allForms, func(a, b string) int { return len(b) - len(a) })
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	d := o.Dialer
	if d == nil {
		d = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if len(p.CABundle) > 0 && !roots.AppendCertsFromPEM(p.CABundle) {
		return nil, fmt.Errorf("egress: CA bundle %s holds no PEM certificate", p.CABundleFile)
	}
	tr := &http.Transport{
		TLSClientConfig:        &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  0,
		MaxResponseHeaderBytes: 64 << 10,
	}
	var proxyHosts sync.Map
	if o.ProxyFromEnv {
		c.proxied = true
		tr.Proxy = func(r *http.Request) (*url.URL, error) {
			u, err := http.ProxyFromEnvironment(r)
			if u != nil {
				proxyHosts.Store(u.Host, true)
				if u.Port() == "" {
					proxyHosts.Store(net.JoinHostPort(u.Hostname(), strconv.Itoa(DefaultPort(u.Scheme))), true)
				}
			}
			return u, err
		}
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if _, ok := proxyHosts.Load(addr); ok {
			// The operator's proxy: dialled as configured.
			var nd net.Dialer
			return nd.DialContext(ctx, network, addr)
		}
		return g.dialContext(ctx, c.resolver, d, network, addr)
	}
	c.tr = tr
	return c, nil
}

// Policy returns the client's policy.
func (c *Client) Policy() *Policy { return &c.pol }

// Close drops idle connections.
func (c *Client) Close() { c.tr.CloseIdleConnections() }

// Session is the outbound HTTP state of one call: its counters and its
// concurrency slots.
type Session struct {
	c      *Client
	module string
	call   int64
	slots  chan struct{}

	mu       sync.Mutex
	requests int
	out, in  int64
}

// NewSession starts the counters of one call of module.
func (c *Client) NewSession(module string, call int64) *Session {
	return &Session{c: c, module: module, call: call, slots: make(chan struct{}, c.limits.Concurrency)}
}

// Error is a request the host did not complete.
type Error struct {
	// Reason is one of the abi.HTTP* reasons.
	Reason string
	// Msg says what happened, for the guest; it never holds a secret.
	Msg string
}

func (e *Error) Error() string { return e.Reason + ": " + e.Msg }

func fail(reason, format string, a ...any) *Error {
	return &Error{Reason: reason, Msg: fmt.Sprintf(format, a...)}
}

// target is one checked hop.
type target struct {
	u      *url.URL
	host   string
	port   int
	method string
	rule   *Rule
	start  time.Time
	out    int
}

// check validates a URL and method against the policy.
func (s *Session) check(raw string, method string) (*target, *Error) {
	if !validValue(raw) || strings.ContainsAny(raw, " ") {
		return nil, fail(abi.HTTPInvalid, "the URL holds a space or a control character")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fail(abi.HTTPInvalid, "bad URL: %v", err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fail(abi.HTTPInvalid, "scheme %q: want http or https", u.Scheme)
	}
	if u.Opaque != "" {
		return nil, fail(abi.HTTPInvalid, "the URL is not hierarchical (scheme://host/path)")
	}
	if u.User != nil {
		return nil, fail(abi.HTTPPolicyRefused, "a URL with userinfo (user@host) is not allowed")
	}
	host, err := checkHost(u.Hostname())
	if err != nil {
		return nil, fail(abi.HTTPPolicyRefused, "%v", err)
	}
	port := DefaultPort(u.Scheme)
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || p[0] == '0' {
			return nil, fail(abi.HTTPInvalid, "port %q: want 1-65535", p)
		}
		port = n
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if _, err := checkPath(path); err != nil {
		return nil, fail(abi.HTTPPolicyRefused, "%v", err)
	}
	u.Fragment, u.RawFragment = "", ""
	// Rebuild the URL from the checked parts, so what is sent is what was
	// checked.
	hp := host
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		hp = "[" + host + "]"
	}
	if port != DefaultPort(u.Scheme) {
		hp += ":" + strconv.Itoa(port)
	}
	u.Host = hp
	r := s.c.pol.match(u.Scheme, host, port, path, method)
	if r == nil {
		return nil, fail(abi.HTTPPolicyRefused, "%s %s://%s:%d%s is not in the module's allow-list", method, u.Scheme, host, port, path)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		a := netip.MustParseAddr(host)
		if !s.c.guard.permits(a) {
			return nil, fail(abi.HTTPPolicyRefused, "%v", &refusedError{addr: a})
		}
	}
	return &target{u: u, host: host, port: port, method: method, rule: r}, nil
}

// Do makes one request for the guest: checked, limited, redirects followed
// to allowed destinations only, secrets added and redacted, audited, and
// reported to the Options.Observer.
func (s *Session) Do(ctx context.Context, req *abi.HTTPRequest) (*abi.HTTPResponse, *Error) {
	d := Done{Module: s.module, Outcome: "ok", Start: time.Now()}
	resp, e := s.do(ctx, req, &d)
	if e != nil && len(s.c.allForms) > 0 {
		// The messages are written never to quote what a secret-bearing
		// request or its response held; this is the net below that.
		e.Msg = redactString(e.Msg, s.c.allForms)
	}
	if s.c.obs != nil {
		d.Duration = time.Since(d.Start)
		if e != nil {
			d.Outcome = e.Reason
		}
		s.c.obs.RequestDone(ctx, &d)
	}
	return resp, e
}

func (s *Session) do(ctx context.Context, req *abi.HTTPRequest, d *Done) (*abi.HTTPResponse, *Error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validToken(method) {
		return nil, fail(abi.HTTPInvalid, "method %q is not an HTTP method", method)
	}
	method = strings.ToUpper(method)
	d.Method = method
	hdr := make(http.Header, len(req.Headers))
	for name, vals := range req.Headers {
		if !validToken(name) {
			return nil, fail(abi.HTTPInvalid, "header name %q is not a token", name)
		}
		if forbiddenHeader(name) {
			return nil, fail(abi.HTTPInvalid, "header %s is set by the host", name)
		}
		for _, v := range vals {
			if !validValue(v) {
				return nil, fail(abi.HTTPInvalid, "header %s: a value must not hold CR, LF or other control characters", name)
			}
			hdr.Add(name, v)
		}
	}
	// Accept-Encoding is the host's: the transport asks for gzip and
	// decodes it, and finish decodes what a server compresses unasked, so
	// the redaction always sees the decoded body.
	hdr.Del("Accept-Encoding")
	var body []byte
	switch {
	case req.Body != "" && req.BodyBase64 != "":
		return nil, fail(abi.HTTPInvalid, "set body or bodyBase64, not both")
	case req.BodyBase64 != "":
		b, err := base64.StdEncoding.DecodeString(req.BodyBase64)
		if err != nil {
			return nil, fail(abi.HTTPInvalid, "bodyBase64: %v", err)
		}
		body = b
	case req.Body != "":
		body = []byte(req.Body)
	}
	t, e := s.check(req.URL, method)
	if e != nil {
		s.audit(method, hostOf(req.URL), 0, 0, 0, 0, e.Reason)
		return nil, e
	}
	timeout := s.c.limits.Timeout
	if req.TimeoutMs > 0 && time.Duration(req.TimeoutMs)*time.Millisecond < timeout {
		timeout = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fail(abi.HTTPTimeout, "timed out waiting for one of the call's %d concurrent requests to end", cap(s.slots))
	}
	defer func() { <-s.slots }()

	var used []*Rule   // the rules whose secret headers this request carried
	secretOrigin := "" // where the first of them went: scheme://host:port
	follow := true     // every one of those rules sets FollowRedirects
	for hop := 0; ; hop++ {
		if len(t.rule.Headers) > 0 {
			if !slices.Contains(used, t.rule) {
				used = append(used, t.rule)
			}
			if secretOrigin == "" {
				secretOrigin = origin(t.u.Scheme, t.host, t.port)
			}
			follow = follow && t.rule.FollowRedirects
		}
		secret := secretOrigin != ""
		resp, e := s.hop(ctx, t, hdr, body, secret)
		if e != nil {
			return nil, e
		}
		d.BytesOut += int64(t.out)
		d.Status = resp.StatusCode
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			return s.finish(t, resp, used, secret, d)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		s.audit(t.method, t.host, resp.StatusCode, t.out, 0, time.Since(t.start), "")
		if hop >= maxRedirects {
			return nil, fail(abi.HTTPProtocol, "more than %d redirects", maxRedirects)
		}
		// From here on nothing of the Location is quoted: it came from a
		// server that may have been sent a secret.
		if secret && !follow {
			s.audit(t.method, t.host, 0, 0, 0, 0, abi.HTTPPolicyRefused)
			return nil, fail(abi.HTTPPolicyRefused, "redirect refused: %s answered %d to a request carrying the policy's secret headers, and its [[http.allow]] rule does not set follow_redirects", t.host, resp.StatusCode)
		}
		next, err := t.u.Parse(loc)
		if err != nil {
			return nil, fail(abi.HTTPProtocol, "%s answered %d with a Location that is not a URL", t.host, resp.StatusCode)
		}
		m := t.method
		if resp.StatusCode == 303 && m != "HEAD" || (resp.StatusCode == 301 || resp.StatusCode == 302) && m == "POST" {
			m, body = "GET", nil
			hdr.Del("Content-Type")
		}
		if secret && urlOrigin(next) != secretOrigin {
			s.audit(m, t.host, 0, 0, 0, 0, abi.HTTPPolicyRefused)
			return nil, fail(abi.HTTPPolicyRefused, "redirect refused: %s redirected a request carrying the policy's secret headers to another destination (follow_redirects follows the same scheme, host and port only)", t.host)
		}
		nt, e := s.check(next.String(), m)
		if e != nil {
			if secret {
				e.Msg = fmt.Sprintf("redirect refused: %s redirected to a destination the module's allow-list does not allow", t.host)
				s.audit(m, t.host, 0, 0, 0, 0, e.Reason)
			} else {
				e.Msg = "redirect refused: " + e.Msg
				s.audit(m, next.Hostname(), 0, 0, 0, 0, e.Reason)
			}
			return nil, e
		}
		t = nt
	}
}

// origin names a destination for the same-host rule of redirects.
func origin(scheme, host string, port int) string {
	return scheme + "://" + host + ":" + strconv.Itoa(port)
}

// urlOrigin is origin of an unchecked URL, normalized as check would.
func urlOrigin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := NormalizeHost(u.Hostname())
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.Unmap().String()
	}
	port := DefaultPort(scheme)
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return ""
		}
		port = n
	}
	return origin(scheme, host, port)
}

// opaque replaces the message of a transport failure of a request that
// carried a secret: the server may have been sent the secret, so nothing
// it answered (status line, headers, certificate names) is quoted.
func opaque(e *Error, host string) *Error {
	switch e.Reason {
	case abi.HTTPTLS:
		e.Msg = "the TLS handshake with " + host + " failed"
	case abi.HTTPConnect:
		e.Msg = "could not connect to " + host
	case abi.HTTPProtocol:
		e.Msg = host + " did not answer valid HTTP"
	}
	return e
}

func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// hop sends one request (no redirect following) and returns its response
// with the body unread.
// secret says the request chain carried a secret: a failure then quotes
// nothing the server sent.
// sliceHeader names the guest headers (canonical) dropped from a request
// carrying a secret: each asks the server for the body sliced or
// re-encoded — a Range (and If-Range, which qualifies it), a charset
// (Accept-Charset: UTF-16), a delta against an earlier body (A-IM, RFC
// 3229) — and an echo of the secret cut into windows shorter than it, or
// in an encoding the redaction does not know, escapes the redaction,
// which looks for whole known forms. HTTP lets a server ignore each of
// them, so dropping them is safe for an honest guest: it gets the whole
// body, redacted. Accept-Encoding is the host's on every request (do).
var sliceHeader = map[string]bool{"Range": true, "If-Range": true, "Accept-Charset": true, "A-Im": true}

func (s *Session) hop(ctx context.Context, t *target, guestHdr http.Header, body []byte, secret bool) (*http.Response, *Error) {
	s.mu.Lock()
	if s.requests >= s.c.limits.Requests {
		s.mu.Unlock()
		e := fail(abi.HTTPPolicyRefused, "more than %d requests in one call (policy http.max_requests)", s.c.limits.Requests)
		s.audit(t.method, t.host, 0, 0, 0, 0, e.Reason)
		return nil, e
	}
	if s.out+int64(len(body)) > s.c.limits.BytesOut {
		s.mu.Unlock()
		e := fail(abi.HTTPPolicyRefused, "request bodies over %d bytes in one call (policy http.max_bytes_out)", s.c.limits.BytesOut)
		s.audit(t.method, t.host, 0, 0, 0, 0, e.Reason)
		return nil, e
	}
	s.requests++
	s.out += int64(len(body))
	s.mu.Unlock()

	if s.c.proxied {
		if e := s.precheck(ctx, t.host); e != nil {
			s.audit(t.method, t.host, 0, 0, 0, 0, e.Reason)
			return nil, e
		}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, t.method, t.u.String(), rd)
	if err != nil {
		return nil, fail(abi.HTTPInvalid, "%v", err)
	}
	for k, v := range guestHdr {
		if secret && sliceHeader[k] {
			continue
		}
		hr.Header[k] = v
	}
	if hr.Header.Get("User-Agent") == "" {
		hr.Header.Set("User-Agent", "wasmcp")
	}
	// The secrets of this hop's rule, and only this hop's: a redirect
	// that leaves the destination drops them.
	for _, h := range t.rule.Headers {
		hr.Header.Set(h.Name, h.Value)
	}
	t.start, t.out = time.Now(), len(body)
	resp, err := s.c.tr.RoundTrip(hr)
	if err != nil {
		e := classify(ctx, err)
		if secret {
			opaque(e, t.host)
		}
		s.audit(t.method, t.host, 0, len(body), 0, time.Since(t.start), e.Reason)
		return nil, e
	}
	return resp, nil
}

// precheck resolves a destination handed to a proxy and refuses it when
// any of its addresses is one the guard refuses.
func (s *Session) precheck(ctx context.Context, host string) *Error {
	if a, err := netip.ParseAddr(host); err == nil {
		if !s.c.guard.permits(a) {
			return fail(abi.HTTPPolicyRefused, "%v", &refusedError{addr: a})
		}
		return nil
	}
	addrs, err := s.c.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return classify(ctx, err)
	}
	for _, a := range addrs {
		if !s.c.guard.permits(a) {
			return fail(abi.HTTPPolicyRefused, "%v", &refusedError{host: host, addr: a.Unmap()})
		}
	}
	return nil
}

// finish reads the body within the call's bytes-in budget, decodes its
// content codings (the budget counts decoded bytes), and builds the
// guest's response with every form of the secrets of used redacted.
func (s *Session) finish(t *target, resp *http.Response, used []*Rule, secret bool, d *Done) (*abi.HTTPResponse, *Error) {
	defer resp.Body.Close()
	s.mu.Lock()
	left := s.c.limits.BytesIn - s.in
	s.mu.Unlock()
	data, err := io.ReadAll(io.LimitReader(resp.Body, left+1))
	n := int64(len(data))
	codings := contentCodings(resp.Header.Values("Content-Encoding"))
	decoded := false
	var derr error
	if n <= left && err == nil && len(codings) > 0 && len(data) > 0 {
		var dec []byte
		switch dec, derr = decodeBody(data, codings, left); {
		case errors.Is(derr, errTooLarge):
			n = left + 1
		case derr == nil:
			data, n, decoded = dec, int64(len(dec)), true
		}
	}
	s.mu.Lock()
	s.in += n
	s.mu.Unlock()
	d.BytesIn = n
	s.audit(t.method, t.host, resp.StatusCode, t.out, n, time.Since(t.start), "")
	if n > left {
		return nil, fail(abi.HTTPTooLarge, "the response bodies of this call passed %d bytes (policy http.max_bytes_in)", s.c.limits.BytesIn)
	}
	if err != nil {
		e := classify(resp.Request.Context(), err)
		if secret {
			opaque(e, t.host)
		}
		return nil, e
	}
	switch {
	case errors.Is(derr, errCoding) && secret:
		return nil, fail(abi.HTTPProtocol, "%s answered in a content coding the host does not decode (it decodes gzip and deflate)", t.host)
	case errors.Is(derr, errCoding):
		return nil, fail(abi.HTTPProtocol, "%s answered in content coding %q; the host decodes gzip and deflate", t.host, strings.Join(codings, ", "))
	case derr != nil:
		return nil, fail(abi.HTTPProtocol, "%s answered a body that does not decode as its Content-Encoding says", t.host)
	}
	forms := s.c.formsOf(used)
	out := &abi.HTTPResponse{Status: resp.StatusCode, URL: redactString(t.u.String(), s.c.allForms), Headers: make(map[string][]string, len(resp.Header))}
	for k, vs := range resp.Header {
		if decoded && (k == "Content-Encoding" || k == "Content-Length") {
			continue
		}
		name := k
		cp := make([]string, len(vs))
		copy(cp, vs)
		if forms != nil {
			name = redactString(k, forms.str)
			for i, v := range cp {
				cp[i] = redactString(v, forms.str)
			}
		}
		if prev, ok := out.Headers[name]; ok {
			cp = append(prev, cp...)
		}
		out.Headers[name] = cp
	}
	if forms != nil {
		if r := redactBytes(data, forms); len(r) != len(data) {
			// The original length would tell the guest the secret's.
			data = r
			delete(out.Headers, "Content-Length")
		}
	}
	if utf8.Valid(data) {
		out.Body = string(data)
	} else {
		out.BodyBase64 = base64.StdEncoding.EncodeToString(data)
	}
	return out, nil
}

// formsOf returns the secret forms of the rules a request used; nil when
// it carried no secret.
func (c *Client) formsOf(used []*Rule) *secretSet {
	switch len(used) {
	case 0:
		return nil
	case 1:
		return c.forms[used[0]]
	}
	var all []string
	for _, r := range used {
		all = append(all, c.forms[r].str...)
	}
	return newSecretSet(all)
}

// classify turns a transport error into a reason.
func classify(ctx context.Context, err error) *Error {
	var re *refusedError
	var dns *net.DNSError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var cie x509.CertificateInvalidError
	var cve *tls.CertificateVerificationError
	var rhe tls.RecordHeaderError
	var ae tls.AlertError
	var op *net.OpError
	switch {
	case errors.As(err, &re):
		return fail(abi.HTTPPolicyRefused, "%v", re)
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return fail(abi.HTTPTimeout, "the request timed out")
	case errors.As(err, &dns):
		return fail(abi.HTTPDNS, "%s did not resolve", dns.Name)
	case errors.As(err, &ua), errors.As(err, &he), errors.As(err, &cie), errors.As(err, &cve), errors.As(err, &rhe), errors.As(err, &ae):
		return fail(abi.HTTPTLS, "TLS: %v", unwrapURL(err))
	case errors.As(err, &op) && op.Op == "dial":
		return fail(abi.HTTPConnect, "could not connect: %v", op.Err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fail(abi.HTTPTimeout, "the request timed out")
	}
	return fail(abi.HTTPProtocol, "%v", unwrapURL(err))
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Hostname()
	}
	return ""
}

// audit writes one line per request: never a header value or a body.
func (s *Session) audit(method, host string, status, out int, in int64, d time.Duration, reason string) {
	args := []any{"module", s.module, "call", s.call, "method", method, "host", host,
		"status", status, "bytes_out", out, "bytes_in", in, "duration", d.Round(time.Microsecond)}
	if reason != "" {
		args = append(args, "refused", reason)
		s.c.log.Warn("outbound http", args...)
		return
	}
	s.c.log.Info("outbound http", args...)
}
