package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Policy is a module's grant of outbound HTTP. A nil *Policy grants
// nothing; an empty allow-list allows nothing.
type Policy struct {
	// Allow lists the destinations the guest may reach.
	Allow []Rule
	// Networks are special addresses (loopback, private, link-local, …)
	// the guest may reach; the SSRF guard refuses every other one. A rule
	// whose host is an IP literal adds that address.
	Networks []netip.Prefix
	// Limits bound the requests of one call.
	Limits Limits
	// CABundle is PEM certificates trusted in addition to the system roots;
	// CABundleFile is where they came from (for display).
	CABundle     []byte
	CABundleFile string
}

// Rule allows one destination.
type Rule struct {
	// Scheme is "http" or "https".
	Scheme string
	// Host is a lower-case host name without a trailing dot, exact or
	// "*.example.com" (any name below example.com, not example.com itself),
	// or an IP literal.
	Host string
	// Port is the TCP port; 0 means the scheme's default.
	Port int
	// PathPrefix is the path the URL's path must start with: "/" allows
	// every path; "/api" allows /api and /api/…, not /apix.
	PathPrefix string
	// Methods are the allowed methods, upper case; empty means GET and HEAD.
	Methods []string
	// Headers are added by the host to every request this rule matches,
	// replacing a guest header of the same name. Their values never reach
	// the guest or the log.
	Headers []SecretHeader
	// FollowRedirects lets the host follow a redirect answered to a
	// request that carried Headers, to the same scheme, host and port only
	// (and only where the allow-list allows). Without it such a redirect
	// ends the request with abi.HTTPPolicyRefused: the Location a server
	// that holds the secret writes is not followed, nor handed over.
	// Requests that carry no secret always follow redirects to allowed
	// destinations.
	FollowRedirects bool
}

// SecretHeader is a header the host adds for a destination.
type SecretHeader struct {
	// Name is the header's canonical name.
	Name string
	// Value is the header's value (Prefix included). Never shown.
	Value string
	// Source says where the value came from, for display: "from VAR",
	// "file PATH" or "literal".
	Source string
}

// Limits bound the outbound requests of one call. A zero field means the
// default of DefaultLimits.
type Limits struct {
	// Requests caps the requests of one call, each redirect hop counted.
	Requests int
	// BytesOut caps the request bodies of one call, together.
	BytesOut int64
	// BytesIn caps the response bodies of one call, together.
	BytesIn int64
	// Timeout caps one request, redirects included; the call's own deadline
	// caps it too.
	Timeout time.Duration
	// Concurrency caps the requests of one call in flight at once; further
	// ones wait.
	Concurrency int
}

// DefaultLimits are the limits of a policy that sets none.
func DefaultLimits() Limits {
	return Limits{Requests: 32, BytesOut: 1 << 20, BytesIn: 8 << 20, Timeout: 10 * time.Second, Concurrency: 4}
}

// WithDefaults fills every zero field of l from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.Requests == 0 {
		l.Requests = d.Requests
	}
	if l.BytesOut == 0 {
		l.BytesOut = d.BytesOut
	}
	if l.BytesIn == 0 {
		l.BytesIn = d.BytesIn
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.Concurrency == 0 {
		l.Concurrency = d.Concurrency
	}
	return l
}

// DefaultPort is the port of a scheme.
func DefaultPort(scheme string) int {
	if scheme == "http" {
		return 80
	}
	return 443
}

// NormalizeHost lower-cases a host name and drops one trailing dot.
func NormalizeHost(h string) string {
	h = strings.ToLower(h)
	return strings.TrimSuffix(h, ".")
}

// CheckRule validates a rule and fills its defaults.
func CheckRule(r *Rule) error {
	switch r.Scheme {
	case "":
		r.Scheme = "https"
	case "http", "https":
	default:
		return fmt.Errorf("scheme %q: want http or https", r.Scheme)
	}
	h := NormalizeHost(r.Host)
	if h == "" {
		return fmt.Errorf("host is required")
	}
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		if a.Zone() != "" {
			return fmt.Errorf("host %q: no zones", r.Host)
		}
		h = a.Unmap().String()
	} else {
		name := strings.TrimPrefix(h, "*.")
		if !validHostName(name) {
			return fmt.Errorf("host %q: want a DNS name (ASCII, punycode for others), *.name, or an IP address", r.Host)
		}
		if strings.Contains(name, "*") {
			return fmt.Errorf("host %q: a wildcard is only allowed as the first label (*.example.com)", r.Host)
		}
	}
	r.Host = h
	if r.Port < 0 || r.Port > 65535 {
		return fmt.Errorf("port %d: want 1-65535", r.Port)
	}
	if r.Port == 0 {
		r.Port = DefaultPort(r.Scheme)
	}
	if r.PathPrefix == "" {
		r.PathPrefix = "/"
	}
	if !strings.HasPrefix(r.PathPrefix, "/") {
		return fmt.Errorf("path %q: want a path starting with /", r.PathPrefix)
	}
	if _, err := checkPath(r.PathPrefix); err != nil {
		return fmt.Errorf("path %q: %v", r.PathPrefix, err)
	}
	for i, m := range r.Methods {
		if !validToken(m) {
			return fmt.Errorf("method %q is not an HTTP method", m)
		}
		r.Methods[i] = strings.ToUpper(m)
	}
	if r.FollowRedirects && len(r.Headers) == 0 {
		return fmt.Errorf("follow_redirects applies to a rule with headers (redirects of requests without secret headers are always followed)")
	}
	for _, h := range r.Headers {
		if !validToken(h.Name) {
			return fmt.Errorf("header %q: not a header name", h.Name)
		}
		if !validValue(h.Value) {
			return fmt.Errorf("header %s: the value holds a control character (CR, LF, NUL)", h.Name)
		}
		if forbiddenHeader(h.Name) {
			return fmt.Errorf("header %s is set by the host's HTTP client", h.Name)
		}
	}
	return nil
}

// hostAddr returns the rule's host as an address when it is an IP literal.
func (r *Rule) hostAddr() (netip.Addr, bool) {
	a, err := netip.ParseAddr(r.Host)
	return a, err == nil
}

// matches reports whether the rule allows a request. host is normalized,
// path is the escaped, checked path, method upper case.
func (r *Rule) matches(scheme, host string, port int, path, method string) bool {
	if r.Scheme != scheme || r.Port != port {
		return false
	}
	if suffix, ok := strings.CutPrefix(r.Host, "*"); ok {
		if !strings.HasSuffix(host, suffix) || len(host) == len(suffix) {
			return false
		}
	} else if r.Host != host {
		return false
	}
	if !pathMatches(r.PathPrefix, path) {
		return false
	}
	if len(r.Methods) == 0 {
		return method == "GET" || method == "HEAD"
	}
	return slices.Contains(r.Methods, method)
}

func pathMatches(prefix, path string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(path, prefix)
	}
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// match finds the first rule allowing a request.
func (p *Policy) match(scheme, host string, port int, path, method string) *Rule {
	for i := range p.Allow {
		if p.Allow[i].matches(scheme, host, port, path, method) {
			return &p.Allow[i]
		}
	}
	return nil
}

// String renders a rule for `wasmcp inspect` and errors (no secrets).
func (r *Rule) String() string {
	host := r.Host
	if a, ok := r.hostAddr(); ok && a.Is6() {
		host = "[" + host + "]"
	}
	methods := "GET,HEAD"
	if len(r.Methods) > 0 {
		methods = strings.Join(r.Methods, ",")
	}
	return methods + " " + r.Scheme + "://" + host + ":" + strconv.Itoa(r.Port) + r.PathPrefix
}

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '*') {
				return false
			}
		}
	}
	return true
}

// validToken reports whether s is an HTTP token (RFC 9110 tchar+).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// validValue reports whether a header value holds no CR, LF, NUL or other
// control character but tab.
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// forbiddenHeader reports whether a header is the HTTP client's own
// business (framing, connection management, proxying, the Host).
func forbiddenHeader(name string) bool {
	switch strings.ToLower(name) {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer",
		"upgrade", "proxy-authorization", "proxy-connection", "proxy-authenticate", "expect":
		return true
	}
	return false
}
