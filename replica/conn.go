package replica

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"
)

// config is what Open reads from the --store URL.
type config struct {
	network, addr   string // "tcp" host:port, or "unix" and a socket path
	tls             *tls.Config
	user, password  string
	db              int
	clientName      string
	prefix          string
	maxRetries      int
	dialTimeout     time.Duration // 0: none
	readTimeout     time.Duration
	writeTimeout    time.Duration
	poolSize        int
	poolTimeout     time.Duration
	maxIdle         int
	connMaxIdleTime time.Duration
	connMaxLifetime time.Duration
}

// urlOptions are the query parameters of the URL: those of go-redis that
// this client honours (the names and forms of the earlier client, so a
// --store URL keeps working), and key_prefix.
var urlOptions = []string{"client_name", "conn_max_idle_time", "conn_max_lifetime", "db", "dial_timeout",
	"idle_timeout", "key_prefix", "max_conn_age", "max_idle_conns", "max_retries", "pool_size", "pool_timeout",
	"read_timeout", "skip_verify", "write_timeout"}

// parseURL reads redis://[user:password@]host[:port][/db][?options],
// rediss:// (TLS) or unix://[user:password@]/path/to/socket[?db=N&...].
// Its errors never repeat the URL, which may hold a password.
func parseURL(rawURL string) (*config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	c := &config{prefix: DefaultKeyPrefix, maxRetries: 1, dialTimeout: 2 * time.Second,
		readTimeout: 2 * time.Second, writeTimeout: 2 * time.Second, poolSize: 10 * runtime.GOMAXPROCS(0),
		connMaxIdleTime: 30 * time.Minute}
	if u.User != nil {
		c.user = u.User.Username()
		c.password, _ = u.User.Password()
	}
	switch u.Scheme {
	case "redis", "rediss":
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = "localhost"
		}
		if port == "" {
			port = "6379"
		}
		c.network, c.addr = "tcp", net.JoinHostPort(host, port)
		switch p := strings.Trim(u.Path, "/"); {
		case p == "":
		case strings.Contains(p, "/"):
			return nil, fmt.Errorf("invalid URL path %q: want /DB", u.Path)
		default:
			if c.db, err = strconv.Atoi(p); err != nil || c.db < 0 {
				return nil, fmt.Errorf("invalid database number %q", p)
			}
		}
		if u.Scheme == "rediss" {
			c.tls = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
	case "unix":
		if strings.TrimSpace(u.Path) == "" {
			return nil, errors.New("empty unix socket path")
		}
		c.network, c.addr = "unix", u.Path
	default:
		return nil, fmt.Errorf("invalid URL scheme %q: want redis, rediss or unix", u.Scheme)
	}
	q := u.Query()
	var unknown []string
	for k := range q {
		if !slices.Contains(urlOptions, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unexpected option: %s (the options are %s)", strings.Join(unknown, ", "), strings.Join(urlOptions, ", "))
	}
	o := query{q: q}
	if q.Has("db") {
		c.db = o.int("db")
	}
	if q.Has("key_prefix") {
		c.prefix = q.Get("key_prefix")
	}
	c.clientName = q.Get("client_name")
	o.set("max_retries", func() { c.maxRetries = o.int("max_retries") })
	o.set("dial_timeout", func() { c.dialTimeout = o.duration("dial_timeout") })
	o.set("read_timeout", func() { c.readTimeout = o.duration("read_timeout") })
	o.set("write_timeout", func() { c.writeTimeout = o.duration("write_timeout") })
	o.set("pool_size", func() { c.poolSize = o.int("pool_size") })
	c.poolTimeout = c.readTimeout + time.Second
	if c.readTimeout == 0 {
		c.poolTimeout = 30 * time.Second
	}
	o.set("pool_timeout", func() { c.poolTimeout = o.duration("pool_timeout") })
	o.set("max_idle_conns", func() { c.maxIdle = o.int("max_idle_conns") })
	o.set("idle_timeout", func() { c.connMaxIdleTime = o.duration("idle_timeout") })
	o.set("conn_max_idle_time", func() { c.connMaxIdleTime = o.duration("conn_max_idle_time") })
	o.set("max_conn_age", func() { c.connMaxLifetime = o.duration("max_conn_age") })
	o.set("conn_max_lifetime", func() { c.connMaxLifetime = o.duration("conn_max_lifetime") })
	if q.Has("skip_verify") {
		if c.tls == nil {
			return nil, errors.New("skip_verify is for rediss:// URLs")
		}
		c.tls.InsecureSkipVerify = o.bool("skip_verify")
	}
	if o.err != nil {
		return nil, o.err
	}
	if c.poolSize <= 0 {
		return nil, errors.New("pool_size must be positive")
	}
	if c.maxIdle <= 0 || c.maxIdle > c.poolSize {
		c.maxIdle = c.poolSize
	}
	if c.db < 0 || c.maxRetries < 0 {
		return nil, errors.New("db and max_retries must not be negative")
	}
	return c, nil
}

// query reads the typed options of a URL, keeping the first error.
type query struct {
	q   url.Values
	err error
}

func (o *query) set(name string, f func()) {
	if o.q.Has(name) {
		f()
	}
}

func (o *query) int(name string) int {
	n, err := strconv.Atoi(o.q.Get(name))
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("invalid %s: want a number", name)
	}
	return n
}

// duration reads a Go duration or a number of seconds; zero or less
// means no timeout.
func (o *query) duration(name string) time.Duration {
	s := o.q.Get(name)
	d, err := time.ParseDuration(s)
	if n, nerr := strconv.Atoi(s); nerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("invalid %s: want a duration (2s) or a number of seconds", name)
	}
	return max(d, 0)
}

func (o *query) bool(name string) bool {
	switch o.q.Get(name) {
	case "true", "1":
		return true
	case "false", "0", "":
		return false
	}
	if o.err == nil {
		o.err = fmt.Errorf("invalid %s: want true or false", name)
	}
	return false
}

// newPool is the connection pool of cfg.
func newPool(cfg *config) *redis.Pool {
	return &redis.Pool{
		DialContext:     func(ctx context.Context) (redis.Conn, error) { return dial(ctx, cfg) },
		TestOnBorrow:    testOnBorrow,
		MaxIdle:         cfg.maxIdle,
		MaxActive:       cfg.poolSize,
		Wait:            true,
		IdleTimeout:     cfg.connMaxIdleTime,
		MaxConnLifetime: cfg.connMaxLifetime,
	}
}

// fullConn is what redis.DialContext returns: a connection with
// per-call contexts and timeouts.
type fullConn interface {
	redis.ConnWithContext
	redis.ConnWithTimeout
}

// checkedConn is a connection and, when it is not TLS, its socket, which
// testOnBorrow checks before the pool hands it out again.
type checkedConn struct {
	fullConn
	check *peeker // nil for TLS
}

// dial opens one connection: connect, TLS, AUTH, CLIENT SETNAME and
// SELECT, all within the dial timeout.
func dial(ctx context.Context, cfg *config) (redis.Conn, error) {
	if cfg.dialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.dialTimeout)
		defer cancel()
	}
	var raw net.Conn
	opts := []redis.DialOption{
		redis.DialContextFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := net.Dialer{KeepAlive: 5 * time.Minute}
			c, err := d.DialContext(ctx, network, addr)
			raw = c
			return c, err
		}),
		redis.DialReadTimeout(cfg.readTimeout),
		redis.DialWriteTimeout(cfg.writeTimeout),
		redis.DialDatabase(cfg.db),
		redis.DialUsername(cfg.user),
		redis.DialPassword(cfg.password),
		redis.DialClientName(cfg.clientName),
	}
	if cfg.tls != nil {
		opts = append(opts, redis.DialUseTLS(true), redis.DialTLSConfig(cfg.tls))
		if cfg.dialTimeout > 0 {
			opts = append(opts, redis.DialTLSHandshakeTimeout(cfg.dialTimeout))
		}
	}
	c, err := redis.DialContext(ctx, cfg.network, cfg.addr, opts...)
	if err != nil {
		return nil, err
	}
	fc, ok := c.(fullConn)
	if !ok {
		_ = c.Close()
		return nil, fmt.Errorf("redis client: %T has no context support", c)
	}
	cc := &checkedConn{fullConn: fc}
	if cfg.tls == nil { // a TLS socket holds records only a read through TLS may consume
		cc.check = newPeeker(raw)
	}
	return cc, nil
}

// testOnBorrow refuses an idle connection whose server closed it (a
// Redis restart) or that holds bytes nobody asked for, without a round
// trip: a non-blocking peek at its socket.
func testOnBorrow(c redis.Conn, _ time.Time) error {
	cc, ok := c.(*checkedConn)
	if !ok || cc.check == nil {
		return nil
	}
	return cc.check.peek()
}

var errUnexpectedData = errors.New("redis: unexpected data on an idle connection")

// retryable reports whether err says a connection broke before or while
// a command was sent (the server went away), so the command may be sent
// again on another connection. Replies of the server, timeouts and the
// caller's context are never retried.
func retryable(err error) bool {
	if err == nil {
		return false
	}
	var re redis.Error
	var ne net.Error
	switch {
	case errors.As(err, &re), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}
