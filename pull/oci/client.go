package oci

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"time"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// Options are how a Client reaches registries.
type Options struct {
	// Insecure allows plain HTTP to a registry that is not on loopback
	// (loopback registries are always reached over plain HTTP).
	Insecure bool
	// Timeout bounds one operation (a push, a pull, a listing of
	// signatures) as a whole; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxModule caps a module layer; 0 means DefaultMaxModule.
	MaxModule int64
	// DockerConfig is the Docker configuration file credentials come
	// from; "" means $DOCKER_CONFIG/config.json or ~/.docker/config.json.
	DockerConfig string
	// Credential, when set, replaces the Docker configuration (tests).
	Credential auth.CredentialFunc
	// Transport, when set, replaces the default transport (tests).
	Transport http.RoundTripper
}

// Timeouts of the transport; Options.Timeout bounds an operation.
const (
	DefaultTimeout        = 2 * time.Minute
	dialTimeout           = 10 * time.Second
	tlsTimeout            = 10 * time.Second
	responseHeaderTimeout = 30 * time.Second
)

// Client talks to OCI registries. It is safe for concurrent use.
type Client struct {
	opts   Options
	client *auth.Client
}

// New makes a client. It reads the Docker configuration's location now;
// credentials (and credential helpers) are asked for per registry, when
// one answers 401.
func New(opts Options) (*Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxModule <= 0 {
		opts.MaxModule = DefaultMaxModule
	}
	cred := opts.Credential
	if cred == nil {
		var store credentials.Store
		var err error
		if opts.DockerConfig != "" {
			store, err = credentials.NewStore(opts.DockerConfig, credentials.StoreOptions{})
		} else {
			store, err = credentials.NewStoreFromDocker(credentials.StoreOptions{})
		}
		if err != nil {
			// The error names the file and what is wrong with it,
			// never a credential.
			return nil, fmt.Errorf("docker credentials: %w", err)
		}
		cred = credentials.Credential(store)
	}
	tr := opts.Transport
	if tr == nil {
		tr = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialContext,
			TLSHandshakeTimeout:   tlsTimeout,
			ResponseHeaderTimeout: responseHeaderTimeout,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   4,
			ForceAttemptHTTP2:     true,
		}
	}
	hc := &http.Client{Transport: &plainGuard{next: tr, insecure: opts.Insecure}, CheckRedirect: checkRedirect}
	return &Client{opts: opts, client: &auth.Client{Client: hc, Cache: auth.NewCache(), Credential: cred,
		Header: http.Header{"User-Agent": {"wasmcp"}}}}, nil
}

// plainGuard refuses, without --insecure, every plain-HTTP request to a
// host that is not loopback, whoever asked for it: the registry itself,
// a redirect, or a bearer token service the registry names (oras-go
// refuses an http realm only when the registry was reached over https,
// so a loopback registry could otherwise send its credentials to another
// host in clear). The requests it lets through are marked so that the
// dialer connects them to loopback addresses only, whatever the name
// resolved to.
type plainGuard struct {
	next     http.RoundTripper
	insecure bool
}

// loopbackOnlyKey marks a request's context: connect to loopback only.
type loopbackOnlyKey struct{}

func (g *plainGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.insecure || !strings.EqualFold(req.URL.Scheme, "http") {
		return g.next.RoundTrip(req)
	}
	if !loopbackHost(req.URL.Hostname()) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &PlainHTTPError{Host: req.URL.Host}
	}
	return g.next.RoundTrip(req.WithContext(context.WithValue(req.Context(), loopbackOnlyKey{}, true)))
}

// PlainHTTPError is a plain-HTTP request to a host that is not loopback,
// refused without --insecure.
type PlainHTTPError struct{ Host string }

func (e *PlainHTTPError) Error() string {
	return fmt.Sprintf("refused plain HTTP to %s: not a loopback host (use TLS, or --insecure)", e.Host)
}

var dialer = &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}

// loopbackDialer connects only to loopback addresses: its Control runs
// on the resolved address before the connection is attempted.
var loopbackDialer = &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second,
	Control: func(network, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("refused plain HTTP to %s: the name resolved to an address that is not loopback (use TLS, or --insecure)", address)
		}
		return nil
	}}

// dialContext dials a plain-HTTP request marked by plainGuard through
// loopbackDialer, anything else through dialer.
func dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if ctx.Value(loopbackOnlyKey{}) != nil {
		return loopbackDialer.DialContext(ctx, network, addr)
	}
	return dialer.DialContext(ctx, network, addr)
}

// maxRedirects bounds a redirect chain.
const maxRedirects = 5

// blobPath is the path of a blob download.
var blobPath = regexp.MustCompile(`^/v2/.+/blobs/sha256:[0-9a-f]{64}$`)

// checkRedirect keeps a request at the registry's origin. A blob download
// may go elsewhere over HTTPS (registries hand them to a storage service),
// and oras-go drops the Authorization header once the chain leaves the
// origin; the blob is checked against its digest anyway. Anything else
// redirected to another scheme, host or port is refused.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0]
	if sameOrigin(first, req) {
		return nil
	}
	if req.Method == http.MethodGet && blobPath.MatchString(first.URL.Path) && req.URL.Scheme == "https" {
		req.Header.Del("Authorization")
		return nil
	}
	return &RedirectError{From: first.URL.Host, To: req.URL.Host}
}

func sameOrigin(a, b *http.Request) bool {
	return a.URL.Scheme == b.URL.Scheme && strings.EqualFold(a.URL.Host, b.URL.Host)
}

// RedirectError is a redirect refused because it leaves the registry.
type RedirectError struct{ From, To string }

func (e *RedirectError) Error() string {
	return fmt.Sprintf("refused a redirect from %s to another host (%s)", e.From, e.To)
}

// Ref is a parsed reference: registry host, repository, and a tag or a
// digest (or neither).
type Ref struct {
	registry.Reference
}

// ParseRef parses REGISTRY/REPOSITORY[:TAG|@DIGEST].
func ParseRef(s string) (Ref, error) {
	r, err := registry.ParseReference(s)
	if err != nil {
		return Ref{}, fmt.Errorf("reference %q: %w (want REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:HEX)", s, cleanRefErr(err))
	}
	return Ref{r}, nil
}

// cleanRefErr drops oras-go's error-kind prefix.
func cleanRefErr(err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return errors.New(msg[i+2:])
	}
	return err
}

// WithDigest is the reference to the same repository pinned at digest.
func (r Ref) WithDigest(digest string) Ref {
	out := r
	out.Reference.Reference = digest
	return out
}

// Loopback reports whether the registry's host is a loopback address or
// localhost.
func (r Ref) Loopback() bool {
	host := r.Host()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return loopbackHost(host)
}

// loopbackHost reports whether a host name (no port) is localhost or a
// loopback address.
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// repo is the oras repository for ref.
func (c *Client) repo(ref Ref) (*remote.Repository, error) {
	plain := ref.Loopback() || c.opts.Insecure
	rr := ref.Reference
	rr.Reference = ""
	repo := &remote.Repository{Client: c.client, Reference: rr, PlainHTTP: plain,
		MaxMetadataBytes: MaxManifest, ReferrerListMaxPages: 4, TagListMaxPages: 4}
	return repo, nil
}

// op bounds one operation.
func (c *Client) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.Timeout)
}

// wrap names the registry in an error and says when the operation timed
// out. Errors of oras-go and net/http name URLs, never credentials.
func (c *Client) wrap(ctx context.Context, what string, ref Ref, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%s %s: the registry did not answer within %s: %w", what, ref, c.opts.Timeout, err)
	}
	if errors.Is(err, auth.ErrBasicCredentialNotFound) {
		return fmt.Errorf("%s %s: the registry asks for credentials and the Docker configuration has none for %s (docker login %s): %w", what, ref, ref.Host(), ref.Host(), err)
	}
	return fmt.Errorf("%s %s: %w", what, ref, err)
}
