// Package redistest starts a real redis-server (Debian's redis-server
// package) on a loopback port in a temporary directory, for the tests of
// the Redis task store and the scale-out end-to-end tests. Without the
// binary a test is skipped with a message, unless CI is set, where that
// is a failure.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server the test started; it is killed at the end of
// the test.
type Server struct {
	t          testing.TB
	bin        string
	dir        string
	port       int
	appendOnly bool
	cmd        *exec.Cmd
	exited     chan struct{}
}

// Need returns the path of the named binary, or skips the test when it is
// absent (fails it when the environment variable CI is set).
func Need(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s is not installed (apt-get install -y %s)", name, pkg)
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI must install it (.ci/run does)")
	}
	t.Skip(msg + "; skipping")
	return ""
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start starts a redis-server on a free loopback port. With appendOnly,
// every write is logged to its directory (appendfsync always) so that a
// restart (Restart) keeps everything acknowledged.
func Start(t testing.TB, appendOnly bool) *Server {
	t.Helper()
	s := &Server{t: t, bin: Need(t, "redis-server", "redis-server"), dir: t.TempDir(), port: FreePort(t), appendOnly: appendOnly}
	s.start()
	t.Cleanup(s.Kill)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	ao := "no"
	if s.appendOnly {
		ao = "yes"
	}
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", ao, "--appendfsync", "always", "--daemonize", "no",
		"--logfile", filepath.Join(s.dir, "redis.log"), "--protected-mode", "yes")
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	s.exited = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(s.cmd, s.exited)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s.ping() {
			return
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.t.Fatalf("redis-server exited at start:\n%s", log)
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.t.Fatal("redis-server did not answer PING within 10s")
}

// ping reports whether the server answers PING.
func (s *Server) ping() bool {
	c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Kill stops the server at once (SIGKILL) and waits for it to exit.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Stop stops the server gracefully (SIGTERM) and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Restart starts the server again on the same port and directory (after
// Kill or Stop).
func (s *Server) Restart() {
	s.t.Helper()
	s.start()
}
