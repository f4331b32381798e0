package registry

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/regfile"
)

// httpSection is the [http] table of a policy file: the module's grant of
// outbound HTTP (ABI 1.1, abi.MethodHTTP). Without it the module may reach
// nothing.
type httpSection struct {
	MaxRequests *int        `toml:"max_requests"`
	MaxBytesOut *byteSize   `toml:"max_bytes_out"`
	MaxBytesIn  *byteSize   `toml:"max_bytes_in"`
	Timeout     *duration   `toml:"timeout"`
	Concurrency *int        `toml:"concurrency"`
	CABundle    string      `toml:"ca_bundle"`
	Networks    []string    `toml:"networks"`
	Allow       []allowRule `toml:"allow"`
}

// allowRule is one [[http.allow]] entry.
type allowRule struct {
	Scheme  string                 `toml:"scheme"`
	Host    string                 `toml:"host"`
	Port    int                    `toml:"port"`
	Path    string                 `toml:"path"`
	Methods []string               `toml:"methods"`
	Headers map[string]secretEntry `toml:"headers"`
	// FollowRedirects follows redirects of requests carrying Headers, on
	// the same host only (egress.Rule.FollowRedirects).
	FollowRedirects bool `toml:"follow_redirects"`
}

// secretEntry is one header value: a literal string, or a table
// {from = "HOST_VAR"} or {file = "PATH"}, either with an optional
// prefix = "Bearer ".
type secretEntry struct {
	value, from, file, prefix string
}

// UnmarshalTOML implements toml.Unmarshaler.
func (e *secretEntry) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		e.value = v
		return nil
	case map[string]any:
		for k, x := range v {
			s, ok := x.(string)
			if !ok {
				return fmt.Errorf("%s = %v: want a string", k, x)
			}
			switch k {
			case "from":
				if !envName.MatchString(s) {
					return fmt.Errorf("from = %q: want the name of a host environment variable", s)
				}
				e.from = s
			case "file":
				e.file = s
			case "prefix":
				e.prefix = s
			default:
				return fmt.Errorf(`unknown key %q in a header table (want from, file, prefix)`, k)
			}
		}
		if (e.from == "") == (e.file == "") {
			return errors.New(`a header table needs one of from = "HOST_VAR" or file = "PATH"`)
		}
		return nil
	}
	return fmt.Errorf("header value %v: want a string or {from = \"HOST_VAR\"} or {file = \"PATH\"}", v)
}

func (s *httpSection) policy(dir string, lookup func(string) (string, bool)) (*egress.Policy, error) {
	p := &egress.Policy{}
	if s.MaxRequests != nil {
		if *s.MaxRequests <= 0 {
			return nil, errors.New("http.max_requests must be positive")
		}
		p.Limits.Requests = *s.MaxRequests
	}
	if s.Concurrency != nil {
		if *s.Concurrency <= 0 {
			return nil, errors.New("http.concurrency must be positive")
		}
		p.Limits.Concurrency = *s.Concurrency
	}
	if s.MaxBytesOut != nil {
		if *s.MaxBytesOut <= 0 {
			return nil, errors.New("http.max_bytes_out must be positive")
		}
		p.Limits.BytesOut = int64(*s.MaxBytesOut)
	}
	if s.MaxBytesIn != nil {
		if *s.MaxBytesIn <= 0 {
			return nil, errors.New("http.max_bytes_in must be positive")
		}
		p.Limits.BytesIn = int64(*s.MaxBytesIn)
	}
	if s.Timeout != nil {
		if *s.Timeout <= 0 {
			return nil, errors.New("http.timeout must be positive")
		}
		p.Limits.Timeout = time.Duration(*s.Timeout)
	}
	if s.CABundle != "" {
		f := s.CABundle
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		b, err := regfile.Read(f, maxCABundleBytes)
		if err != nil {
			return nil, fmt.Errorf("http.ca_bundle: %w", err)
		}
		p.CABundle, p.CABundleFile = b, f
	}
	for _, n := range s.Networks {
		pfx, err := netip.ParsePrefix(n)
		if err != nil {
			a, aerr := netip.ParseAddr(n)
			if aerr != nil {
				return nil, fmt.Errorf("http.networks: %q is neither an address nor a CIDR network", n)
			}
			pfx = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		if pfx.Addr().Is4In6() {
			pfx = netip.PrefixFrom(pfx.Addr().Unmap(), pfx.Bits()-96)
		}
		if pfx.Bits() == 0 {
			return nil, fmt.Errorf("http.networks: %q names every address; name the networks the module needs", n)
		}
		p.Networks = append(p.Networks, pfx.Masked())
	}
	for i, a := range s.Allow {
		where := fmt.Sprintf("http.allow %d", i+1)
		r := egress.Rule{Scheme: a.Scheme, Host: a.Host, Port: a.Port, PathPrefix: a.Path, Methods: a.Methods, FollowRedirects: a.FollowRedirects}
		for name, e := range a.Headers {
			h := egress.SecretHeader{Name: http.CanonicalHeaderKey(name)}
			switch {
			case e.from != "":
				v, ok := lookup(e.from)
				if !ok {
					return nil, fmt.Errorf("%s: header %s: host variable %s is not set", where, name, e.from)
				}
				h.Value, h.Source = v, "from "+e.from
			case e.file != "":
				f := e.file
				if !filepath.IsAbs(f) {
					f = filepath.Join(dir, f)
				}
				b, err := regfile.Read(f, maxSecretFileBytes)
				if err != nil {
					return nil, fmt.Errorf("%s: header %s: %w", where, name, err)
				}
				h.Value, h.Source = strings.TrimRight(string(b), "\r\n"), "file "+f
			default:
				h.Value, h.Source = e.value, "literal"
			}
			h.Value = e.prefix + h.Value
			if h.Value == "" {
				return nil, fmt.Errorf("%s: header %s: the value is empty", where, name)
			}
			r.Headers = append(r.Headers, h)
		}
		slices.SortFunc(r.Headers, func(a, b egress.SecretHeader) int { return strings.Compare(a.Name, b.Name) })
		if err := egress.CheckRule(&r); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		p.Allow = append(p.Allow, r)
	}
	return p, nil
}
