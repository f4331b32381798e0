// Package registrytest starts a real OCI distribution registry (Debian's
// docker-registry package, the CNCF distribution server 2.8) on a
// loopback port with a temporary storage directory, with or without
// htpasswd basic auth, for the tests of the OCI client and the end-to-end
// tests of pulled tools. Without the binary a test is skipped with a
// message, unless CI is set, where that is a failure.
package registrytest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Binary is where Debian's docker-registry package installs the server.
const Binary = "/usr/bin/docker-registry"

// Server is a registry the test started; it is stopped at the end of the
// test.
type Server struct {
	// Addr is host:port on loopback.
	Addr string
	// Storage is the registry's storage directory (its filesystem
	// driver's root), for tests that tamper with what it holds.
	Storage string
	// User and Password are set when the registry asks for basic auth.
	User, Password string

	t      testing.TB
	cfg    string
	cmd    *exec.Cmd
	exited chan struct{}
	log    string
}

// Need returns the registry binary's path, or skips the test when it is
// absent (fails it when the environment variable CI is set).
func Need(t testing.TB) string {
	t.Helper()
	bin := Binary
	if p := os.Getenv("WASMCP_DOCKER_REGISTRY"); p != "" {
		bin = p
	}
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	msg := fmt.Sprintf("%s is not installed (apt-get install -y docker-registry)", bin)
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI must install it (.ci/run does)")
	}
	t.Skip(msg + "; skipping")
	return ""
}

// Start starts a registry on a free loopback port; with auth it asks for
// basic auth (htpasswd, bcrypt) of User and Password.
func Start(t testing.TB, auth bool) *Server {
	t.Helper()
	bin := Need(t)
	dir := t.TempDir()
	s := &Server{t: t, Storage: filepath.Join(dir, "storage"), cfg: filepath.Join(dir, "config.yml"), log: filepath.Join(dir, "registry.log")}
	if err := os.MkdirAll(s.Storage, 0o700); err != nil {
		t.Fatal(err)
	}
	s.Addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
`, s.Storage, s.Addr)
	if auth {
		s.User, s.Password = "publisher", "correct horse battery staple"
		hash, err := bcrypt.GenerateFromPassword([]byte(s.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		pw := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(pw, []byte(s.User+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += fmt.Sprintf("auth:\n  htpasswd:\n    realm: wasmcp-test\n    path: %s\n", pw)
	}
	if err := os.WriteFile(s.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s.start(bin)
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start(bin string) {
	s.t.Helper()
	logf, err := os.Create(s.log)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cmd = exec.Command(bin, "serve", s.cfg)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.exited = make(chan struct{})
	go func() { _ = s.cmd.Wait(); logf.Close(); close(s.exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + s.Addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-s.exited:
			s.t.Fatalf("docker-registry exited at start: %s", s.Log())
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("docker-registry did not answer on %s: %v; log: %s", s.Addr, err, s.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the registry (the storage stays, for Restart).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Restart starts the registry again on the same port and storage.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start(Need(s.t))
}

// Log is what the registry logged.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return strings.TrimSpace(string(b))
}

// BlobPath is the file holding the blob with the given digest
// ("sha256:<hex>") in the registry's storage.
func (s *Server) BlobPath(digest string) string {
	hex := strings.TrimPrefix(digest, "sha256:")
	return filepath.Join(s.Storage, "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data")
}

// TagLink is the file linking a tag of repo to its manifest digest.
func (s *Server) TagLink(repo, tag string) string {
	return filepath.Join(s.Storage, "docker", "registry", "v2", "repositories", repo, "_manifests", "tags", tag, "current", "link")
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
