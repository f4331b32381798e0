package replica

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/wasmcp/wasmcp/internal/testkit/redistest"
	"github.com/wasmcp/wasmcp/tasks"
	"github.com/wasmcp/wasmcp/tasks/taskstest"
)

// The --store URL keeps the forms and option names it had: the options
// are read, an unknown or malformed one is refused by name, and no error
// repeats the URL.
func TestParseURL(t *testing.T) {
	c, err := parseURL("rediss://u:p@example.test/2?dial_timeout=1s&read_timeout=3&write_timeout=0&pool_size=4&pool_timeout=5s" +
		"&max_idle_conns=2&conn_max_idle_time=1m&conn_max_lifetime=1h&max_retries=0&client_name=w&key_prefix=k:&skip_verify=true")
	if err != nil {
		t.Fatal(err)
	}
	if c.network != "tcp" || c.addr != "example.test:6379" || c.user != "u" || c.password != "p" || c.db != 2 ||
		c.dialTimeout != time.Second || c.readTimeout != 3*time.Second || c.writeTimeout != 0 || c.poolSize != 4 ||
		c.poolTimeout != 5*time.Second || c.maxIdle != 2 || c.connMaxIdleTime != time.Minute || c.connMaxLifetime != time.Hour ||
		c.maxRetries != 0 || c.clientName != "w" || c.prefix != "k:" || c.tls == nil || !c.tls.InsecureSkipVerify ||
		c.tls.ServerName != "example.test" {
		t.Fatalf("parsed %+v", c)
	}
	c, err = parseURL("redis://[::1]")
	if err != nil || c.addr != "[::1]:6379" || c.tls != nil || c.prefix != DefaultKeyPrefix || c.maxRetries != 1 || c.dialTimeout != 2*time.Second {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = parseURL("unix://:pw@/run/redis.sock?db=5")
	if err != nil || c.network != "unix" || c.addr != "/run/redis.sock" || c.db != 5 || c.password != "pw" {
		t.Fatalf("unix: %+v %v", c, err)
	}
	for url, want := range map[string]string{
		"redis://h?bogus=1&pool_fifo=true":   "unexpected option: bogus, pool_fifo",
		"redis://h/x":                        "invalid database number",
		"redis://h/1/2":                      "invalid URL path",
		"redis://h?dial_timeout=soon":        "invalid dial_timeout",
		"redis://h?pool_size=0":              "pool_size must be positive",
		"redis://h?skip_verify=true":         "skip_verify is for rediss://",
		"rediss://h?skip_verify=maybe":       "invalid skip_verify",
		"http://h":                           "invalid URL scheme",
		"unix://":                            "empty unix socket path",
		"redis://user:s3cret@h:bad?s3cret=1": "invalid port",
	} {
		_, err := parseURL(url)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want an error with %q", url, err, want)
		}
	}
}

// Password and ACL user from the URL; a wrong password is a reply of the
// server, not an outage.
func TestRedisAuth(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	admin := openRedis(t, srv.URL())
	if _, err := admin.do(ctx, "ACL", "SETUSER", "alice", "on", ">alicepw", "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.do(ctx, "CONFIG", "SET", "requirepass", "defaultpw"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"redis://:defaultpw@" + srv.Addr(), "redis://alice:alicepw@" + srv.Addr() + "/1"} {
		s := openRedis(t, u)
		if err := s.Create(ctx, taskstest.NewTask(tasks.NewID(), "", time.Now())); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	_, err := Open(ctx, "redis://alice:wrong@"+srv.Addr(), Options{})
	if err == nil || errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "wrong@") {
		t.Fatalf("wrong password: %v", err)
	}
}

// After Redis restarts, the connections idle in the pool are dead; none
// of them is handed to a command (each is checked without a round trip),
// so nothing fails even with retries off.
func TestRedisRestartStaleConnections(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	s := openRedis(t, srv.URL()+"?max_retries=0")
	var wg sync.WaitGroup
	for range 8 { // several connections at once, all idle afterwards
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.do(ctx, "BLPOP", "nothing", "0.05"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := s.pool.IdleCount(); n < 2 {
		t.Fatalf("%d idle connections; the test needs several", n)
	}
	srv.Kill()
	srv.Restart()
	for i := range 12 {
		if _, err := s.do(ctx, "PING"); err != nil {
			t.Fatalf("command %d after the restart: %v", i, err)
		}
	}
}

// A script the server forgot (SCRIPT FLUSH, a restart without
// persistence) is sent again in full.
func TestRedisScriptReload(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	s := openRedis(t, srv.URL())
	if err := s.Create(ctx, taskstest.NewTask("one", "", time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.do(ctx, "SCRIPT", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, taskstest.NewTask("two", "", time.Now())); err != nil {
		t.Fatalf("after SCRIPT FLUSH: %v", err)
	}
	if ok, err := redis.Int(s.do(ctx, "EXISTS", s.taskKey("two"))); ok != 1 || err != nil {
		t.Fatalf("the record: %v %v", ok, err)
	}
}

// silent is a TCP server that accepts connections and never answers.
func silent(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	return l.Addr().String()
}

// A server that does not answer: the caller's context ends the wait, and
// so does the read timeout.
func TestRedisContextAndTimeout(t *testing.T) {
	addr := silent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Open(ctx, "redis://"+addr+"?read_timeout=0&write_timeout=0", Options{})
	if !errors.Is(err, ErrUnavailable) || time.Since(start) > 2*time.Second {
		t.Fatalf("cancelled after %s: %v", time.Since(start), err)
	}
	start = time.Now()
	_, err = Open(context.Background(), "redis://"+addr+"?read_timeout=300ms", Options{})
	if !errors.Is(err, ErrUnavailable) || time.Since(start) > 2*time.Second {
		t.Fatalf("read timeout after %s: %v", time.Since(start), err)
	}
}

// A subscription comes back by itself after Redis restarts; what is
// published then arrives.
func TestRedisSubscribeReconnects(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	a, b := openRedis(t, srv.URL()), openRedis(t, srv.URL())
	got := make(chan string, 16)
	done, err := a.Subscribe(ctx, "ch", func(m []byte) { got <- string(m) })
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, "ch", "before"); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m != "before" {
		t.Fatalf("got %q", m)
	}
	srv.Kill()
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for received := false; !received; {
		if time.Now().After(deadline) {
			t.Fatal("nothing arrived after the restart")
		}
		_ = b.Publish(ctx, "ch", "after")
		select {
		case m := <-got:
			received = m == "after"
		case <-time.After(100 * time.Millisecond):
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription did not stop with its context")
	}
}

// rediss:// is TLS: with skip_verify the server's self-signed certificate
// is accepted, without it refused.
func TestRedisTLS(t *testing.T) {
	bin := redistest.Need(t, "redis-server", "redis-server")
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	cert, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	port := redistest.FreePort(t)
	cmd := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--tls-cert-file", cert, "--tls-key-file", keyFile, "--tls-ca-cert-file", cert, "--tls-auth-clients", "no",
		"--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "rediss://127.0.0.1:" + strconv.Itoa(port)
	var s *Redis
	for deadline := time.Now().Add(10 * time.Second); s == nil; {
		s, err = Open(context.Background(), url+"?skip_verify=true", Options{})
		if err != nil {
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
				t.Fatalf("TLS server: %v\n%s", err, log)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	defer s.Close()
	if err := s.Create(context.Background(), taskstest.NewTask("t", "", time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), url, Options{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an unverified certificate was accepted: %v", err)
	}
}

// Closing the store ends its subscriptions and their connections, as a
// process that dies would.
func TestRedisCloseEndsSubscriptions(t *testing.T) {
	srv := redistest.Start(t, false)
	s, err := Open(context.Background(), srv.URL(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	done, err := s.Subscribe(context.Background(), "ch", func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription outlived its store")
	}
	if _, err := s.Get(context.Background(), "x"); !errors.Is(err, tasks.ErrClosed) {
		t.Fatalf("get on a closed store: %v", err)
	}
}

// A malformed entry in an owner's index (Redis written by something else)
// is an error of List, not a panic of the server.
func TestRedisMalformedIndexEntry(t *testing.T) {
	srv := redistest.Start(t, false)
	ctx := context.Background()
	s := openRedis(t, srv.URL())
	if _, err := s.do(ctx, "ZADD", s.ownerKey("alice"), 0, "short"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, "alice", "", 10); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("list over a malformed entry: %v", err)
	}
}
