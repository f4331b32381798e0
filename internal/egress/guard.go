package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// Resolver resolves host names; *net.Resolver is one. Tests inject their
// own so that no name resolves outside the test.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens connections; *net.Dialer is one. The guard only ever asks
// it for an IP address it has checked.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// special are the ranges the guard refuses beyond what netip classifies
// (loopback, private, link-local, multicast, unspecified): addresses that
// are not public unicast, or that embed an IPv4 address a router may
// translate to (NAT64, 6to4, Teredo, IPv4-compatible).
var special = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
		"::/96", "64:ff9b::/96", "64:ff9b:1::/48", "2001::/32", "2001:db8::/32", "2002::/16", "fec0::/10", "100::/64",
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// guard decides which addresses may be dialled.
type guard struct {
	allowed []netip.Prefix
}

// permits reports whether a may be dialled. IPv4-mapped IPv6 counts as
// IPv4.
func (g *guard) permits(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	for _, p := range g.allowed {
		if p.Contains(a) {
			return true
		}
	}
	if a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return false
	}
	for _, p := range special {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// refusedError is a connection the guard refused.
type refusedError struct {
	host string
	addr netip.Addr
}

func (e *refusedError) Error() string {
	if e.host != "" && e.host != e.addr.String() {
		return fmt.Sprintf("%s resolves to %s, an address the policy does not allow (loopback, private, link-local, multicast or otherwise special)", e.host, e.addr)
	}
	return fmt.Sprintf("address %s is not allowed by the policy (loopback, private, link-local, multicast or otherwise special)", e.addr)
}

// dialContext resolves addr's host with the resolver, refuses every
// address the guard does not permit, and dials the permitted ones in turn,
// by IP, so no second resolution can change the answer (DNS rebinding).
func (g *guard) dialContext(ctx context.Context, r Resolver, d Dialer, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portText, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	var firstRefused *refusedError
	var lastErr error
	for _, a := range addrs {
		if !g.permits(a) {
			if firstRefused == nil {
				firstRefused = &refusedError{host: host, addr: a.Unmap()}
			}
			continue
		}
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return c, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, firstRefused
}

// control is a net.Dialer.Control that checks the address of the socket
// about to connect: a second line behind dialContext for the real dialer.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: connect to %q: %w", address, err)
	}
	if !g.permits(ap.Addr()) {
		return &refusedError{addr: ap.Addr().Unmap()}
	}
	return nil
}

// checkHost normalizes a URL's host and refuses the forms that make a
// host name mean something else to different parsers: numeric IPv4 forms
// other than the dotted quad (2130706433, 0x7f.1, 0177.0.0.1, 127.1),
// zones, and non-ASCII names.
func checkHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("the URL has no host")
	}
	if strings.HasPrefix(h, "[") {
		return "", errors.New("malformed IPv6 host")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", errors.New("an IPv6 zone is not allowed")
		}
		return a.Unmap().String(), nil
	}
	if strings.Contains(h, ":") || strings.Contains(h, "%") {
		return "", fmt.Errorf("host %q is not a valid address", h)
	}
	n := NormalizeHost(h)
	if !validHostName(n) || strings.Contains(n, "*") {
		return "", fmt.Errorf("host %q is not a valid DNS name (ASCII only; use punycode)", h)
	}
	labels := strings.Split(n, ".")
	last := labels[len(labels)-1]
	if numericLabel(last) {
		return "", fmt.Errorf("host %q is a numeric address in a form other than a.b.c.d", h)
	}
	return n, nil
}

// numericLabel reports whether a label is a number in decimal, octal or
// hex (what inet_aton accepts as the last part of an IPv4 address).
func numericLabel(s string) bool {
	if t, ok := strings.CutPrefix(s, "0x"); ok {
		for i := 0; i < len(t); i++ {
			if !strings.ContainsRune("0123456789abcdef", rune(t[i])) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// checkPath refuses a path with a "." or ".." segment, or a segment that
// decodes to one holding '/' or '\' or a control character: servers
// normalize those, so a prefix check on the raw path would be bypassed.
func checkPath(escaped string) (string, error) {
	for _, seg := range strings.Split(escaped, "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return "", fmt.Errorf("bad escape in path: %v", err)
		}
		// A server that reads ";" as the start of path parameters
		// (Tomcat, Jetty, Spring) takes "..;x" as "..": "/v1/..;/admin"
		// would reach "/admin", outside the rule's path.
		base, _, _ := strings.Cut(dec, ";")
		if base == "." || base == ".." {
			return "", errors.New(`a path must not contain "." or ".." segments (";" parameters included)`)
		}
		if strings.ContainsAny(dec, "/\\") || !validValue(dec) {
			return "", errors.New("a path segment must not encode '/', '\\' or control characters")
		}
	}
	return escaped, nil
}
