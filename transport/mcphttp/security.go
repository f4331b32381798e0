package mcphttp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// loopbackNames are the host names of a loopback bind.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// isLoopback reports whether addr ("host:port") binds a loopback address.
func isLoopback(addr string) (bool, string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, ""
	}
	if strings.EqualFold(host, "localhost") {
		return true, port
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), port
}

// originPolicy decides which Origin headers are allowed.
type originPolicy struct {
	any     bool
	entries []originEntry
}

type originEntry struct {
	scheme, host, port string // port "" matches any
	null               bool
}

// newOriginPolicy allows the listed origins only: by default no browser
// origin other than the server's own (hostPolicy.sameOrigin), whatever the
// bind — a page on another localhost port is still a web page the user did
// not choose to trust with the tools.
func newOriginPolicy(list []string) originPolicy {
	var p originPolicy
	for _, o := range list {
		o = strings.TrimSpace(o)
		switch {
		case o == "":
		case o == "*":
			p.any = true
		case o == "null":
			p.entries = append(p.entries, originEntry{null: true})
		default:
			if e, ok := parseOrigin(o); ok {
				p.entries = append(p.entries, e)
			}
		}
	}
	return p
}

func parseOrigin(o string) (originEntry, bool) {
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return originEntry{}, false
	}
	return originEntry{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}, true
}

func (p *originPolicy) allow(origin string) bool {
	if p.any {
		return true
	}
	if origin == "null" {
		for _, e := range p.entries {
			if e.null {
				return true
			}
		}
		return false
	}
	o, ok := parseOrigin(origin)
	if !ok {
		return false
	}
	for _, e := range p.entries {
		if !e.null && e.scheme == o.scheme && e.host == o.host && (e.port == "" || e.port == o.port) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether origin is the server's own origin as the
// request names it: the request's scheme, and its Host (name and port).
// It counts only when the Host allow-list is on — then the name is one the
// server answers to, not one an attacker's DNS made point at it.
func (p *hostPolicy) sameOrigin(r *http.Request, origin string) bool {
	if !p.on {
		return false
	}
	o, ok := parseOrigin(origin)
	if !ok {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	name, port := splitHost(r.Host)
	if port == "" {
		port = defaultPort(scheme)
	}
	oport := o.port
	if oport == "" {
		oport = defaultPort(o.scheme)
	}
	return o.scheme == scheme && strings.EqualFold(o.host, name) && oport == port
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// hostPolicy decides which Host headers are served (DNS rebinding).
type hostPolicy struct {
	on      bool
	entries []hostEntry
}

type hostEntry struct{ name, port string } // port "" matches any

func newHostPolicy(list []string, addr string) hostPolicy {
	var p hostPolicy
	if len(list) == 0 {
		if lo, port := isLoopback(addr); lo {
			p.on = true
			for _, n := range loopbackNames {
				p.entries = append(p.entries, hostEntry{name: n, port: port})
			}
		}
		return p
	}
	for _, h := range list {
		h = strings.TrimSpace(h)
		switch {
		case h == "":
		case h == "*":
			return hostPolicy{}
		default:
			p.on = true
			name, port := splitHost(h)
			p.entries = append(p.entries, hostEntry{name: strings.ToLower(name), port: port})
		}
	}
	return p
}

// splitHost splits "name", "name:port", "[v6]" or "[v6]:port".
func splitHost(h string) (name, port string) {
	if n, p, err := net.SplitHostPort(h); err == nil {
		return n, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ""
}

// allow checks a Host header: its name must be listed; its port, when both
// it and the entry have one, must match.
func (p *hostPolicy) allow(host string) bool {
	if !p.on {
		return true
	}
	name, port := splitHost(host)
	for _, e := range p.entries {
		if strings.EqualFold(e.name, name) && (e.port == "" || port == "" || e.port == port) {
			return true
		}
	}
	return false
}

// Headers a browser client may send and read.
const (
	corsAllowHeaders  = "Content-Type, Accept, Authorization, DPoP, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-Id, Mcp-Method, Mcp-Name"
	corsExposeHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
)

// corsAllowed is corsAllowHeaders as a lower-case set.
var corsAllowed = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Split(corsAllowHeaders, ",") {
		m[strings.ToLower(strings.TrimSpace(f))] = true
	}
	return m
}()

// cors adds the CORS headers for an allowed Origin.
func cors(w http.ResponseWriter, r *http.Request, origin string) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
}

// preflight answers a CORS preflight. The requested headers are allowed
// as asked when they are the MCP headers or Mcp-Param-* headers.
func preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "POST, GET, DELETE, OPTIONS")
	allowed := corsAllowHeaders
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		ok := true
		for _, f := range strings.Split(req, ",") {
			f = strings.ToLower(strings.TrimSpace(f))
			if f != "" && !strings.HasPrefix(f, "mcp-param-") && !corsAllowed[f] {
				ok = false
				break
			}
		}
		if ok {
			allowed = req
		}
	}
	h.Set("Access-Control-Allow-Headers", allowed)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
