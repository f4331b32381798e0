package tests

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/registrytest"
)

// Tools from an OCI registry (docs/registry-tools.md), end to end against
// a real registry (Debian's docker-registry, distribution 2.8) on
// loopback: push, pull by digest, approve, serve; tampering in the
// registry's storage refused; a registry down at start leaves the cached,
// verified tools served; an update asking for more than was approved
// keeps the old version served.

// regEnv is one test's registry, Docker configuration and caches.
type regEnv struct {
	reg       *registrytest.Server
	dockerCfg string
	cache     string // --cache-dir: a copy of the shared compilation cache, with a blob cache of its own
	tools     string
	v1, v2    []byte
	mods      string // where v1.wasm, v2.wasm (and their policies) are written for push
}

func newRegEnv(t *testing.T, withAuth bool) *regEnv {
	t.Helper()
	v1, v2, shared := reloadBuild(t)
	e := &regEnv{reg: registrytest.Start(t, withAuth), v1: v1, v2: v2, tools: t.TempDir(), mods: t.TempDir()}
	e.cache = filepath.Join(t.TempDir(), "cache")
	if err := copyTree(shared, e.cache); err != nil {
		t.Fatal(err)
	}
	e.dockerCfg = filepath.Join(t.TempDir(), "config.json")
	cfg := `{}`
	if withAuth {
		a := base64.StdEncoding.EncodeToString([]byte(e.reg.User + ":" + e.reg.Password))
		cfg = fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, e.reg.Addr, a)
	}
	if err := os.WriteFile(e.dockerCfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// copyTree copies a directory of regular files, keeping modes.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
}

// run runs a wasmcp command and returns its output; it fails the test
// when the exit status is not want (0 or not 0).
func (e *regEnv) run(t *testing.T, ok bool, args ...string) string {
	t.Helper()
	if args[0] == "push" || args[0] == "pull" {
		args = append(args, "--docker-config", e.dockerCfg)
	}
	cmd := exec.Command(wasmcpBin, args...)
	out, err := cmd.CombinedOutput()
	if ok && err != nil {
		t.Fatalf("wasmcp %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if !ok && err == nil {
		t.Fatalf("wasmcp %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}

// module writes the version v of the reload guest, with the policy when
// not empty, and returns its path.
func (e *regEnv) module(t *testing.T, v string, policy string) string {
	t.Helper()
	b := e.v1
	if v == "v2" {
		b = e.v2
	}
	dir := filepath.Join(e.mods, v+fmt.Sprint(len(policy)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "reload.wasm")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if policy != "" {
		if err := os.WriteFile(filepath.Join(dir, "reload.policy.toml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

var pushedDigest = regexp.MustCompile(`@(sha256:[0-9a-f]{64})`)

func (e *regEnv) push(t *testing.T, v, policy, ref string, extra ...string) string {
	t.Helper()
	out := e.run(t, true, append([]string{"push", e.module(t, v, policy), e.reg.Addr + "/" + ref}, extra...)...)
	m := pushedDigest.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("push printed no digest: %s", out)
	}
	return m[1]
}

func (e *regEnv) serve(t *testing.T, extra ...string) *served {
	t.Helper()
	return startServe(t, append([]string{"--tools", e.tools, "--cache-dir", e.cache, "--docker-config", e.dockerCfg}, extra...)...)
}

func callVersion(t *testing.T, c mcpClient) string {
	t.Helper()
	return c.request("tools/call", `{"name":"reload_version","arguments":{}}`, nil)
}

// TestRegistryPullServe: push through basic auth, pull by digest
// (unsigned, allowed), serve; a tag moved after the pull changes nothing;
// the registry down at start leaves the cached, verified tool served.
func TestRegistryPullServe(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, true)
	d1 := e.push(t, "v1", "", "tools/reload:v1")
	out := e.run(t, true, "pull", e.reg.Addr+"/tools/reload:v1", "-o", e.tools, "--unsigned", "--cache-dir", e.cache)
	if !strings.Contains(out, d1) || !strings.Contains(out, "nothing to approve") {
		t.Fatalf("pull: %s", out)
	}
	lock, _ := os.ReadFile(filepath.Join(e.tools, "wasmcp.lock"))
	if !strings.Contains(string(lock), d1) || !strings.Contains(string(lock), "signed = false") {
		t.Fatalf("lock: %s", lock)
	}
	// The tag moves after the pull: what runs is still the pinned digest.
	e.push(t, "v2", "", "tools/reload:v1")
	s := e.serve(t)
	c := newStdioClient(t, s)
	if got := callVersion(t, c); !strings.Contains(got, "version v1") {
		t.Fatalf("served: %s", got)
	}
	s.Stdin.Close()
	<-s.Done()

	// The registry is down: the cached, verified tool is served.
	e.reg.Stop()
	os.Remove(filepath.Join(e.tools, "reload.wasm"))
	s = e.serve(t)
	c = newStdioClient(t, s)
	if got := callVersion(t, c); !strings.Contains(got, "version v1") {
		t.Fatalf("served with the registry down: %s\n%s", got, s.Stderr)
	}
}

// TestRegistryTamper: a blob or a manifest changed in the registry's
// storage is refused at pull, and serve does not serve it.
func TestRegistryTamper(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, false)
	d1 := e.push(t, "v1", "", "tools/reload:v1")
	man, err := os.ReadFile(e.reg.BlobPath(d1))
	if err != nil {
		t.Fatal(err)
	}
	layer := regexp.MustCompile(`"application/wasm","digest":"(sha256:[0-9a-f]{64})"`).FindSubmatch(man)
	if layer == nil {
		t.Fatalf("no wasm layer in %s", man)
	}
	flip := func(path string, at func(b []byte) int) (restore func()) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		orig := append([]byte{}, b...)
		b[at(b)] ^= 0x20
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return func() { _ = os.WriteFile(path, orig, 0o644) }
	}
	pull := func() string {
		return e.run(t, false, "pull", e.reg.Addr+"/tools/reload:v1", "-o", e.tools, "--unsigned", "--cache-dir", t.TempDir())
	}
	// A blob swapped: one byte of the module layer.
	restore := flip(e.reg.BlobPath(string(layer[1])), func(b []byte) int { return len(b) - 1 })
	if out := pull(); !strings.Contains(out, "digest check failed") {
		t.Fatalf("tampered blob: %s", out)
	}
	restore()
	// The manifest swapped: one byte of its layer title.
	restore = flip(e.reg.BlobPath(d1), func(b []byte) int { return strings.Index(string(b), "reload.wasm") })
	if out := pull(); !strings.Contains(out, "digest check failed") {
		t.Fatalf("tampered manifest: %s", out)
	}
	// Serve with a lock pinning the digest and an empty cache: refused,
	// with the check that failed, and nothing installed.
	writeLock(t, e.tools, "reload", e.reg.Addr+"/tools/reload:v1", d1, "signed = false\napproved = []\n")
	s := startServe(t, "--tools", e.tools, "--cache-dir", filepath.Join(t.TempDir(), "c"), "--docker-config", e.dockerCfg)
	waitFor(t, 10*time.Second, "the refusal", func() bool {
		return strings.Contains(s.Stderr.String(), "pulled tool refused; not served") && strings.Contains(s.Stderr.String(), "check=digest")
	})
	if _, err := os.Stat(filepath.Join(e.tools, "reload.wasm")); err == nil {
		t.Fatal("a refused tool was installed")
	}
	restore()
}

func writeLock(t *testing.T, dir, name, ref, digest, extra string) {
	t.Helper()
	lock := fmt.Sprintf("[[tool]]\nname = %q\nreference = %q\ndigest = %q\n%s", name, ref, digest, extra)
	if err := os.WriteFile(filepath.Join(dir, "wasmcp.lock"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRegistryUnsignedRefused: a lock naming a signer refuses a module
// without a signature; pull refuses a module with no expected signer.
func TestRegistryUnsignedRefused(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, false)
	d1 := e.push(t, "v1", "", "tools/reload:v1")
	if out := e.run(t, false, "pull", e.reg.Addr+"/tools/reload:v1", "-o", e.tools, "--cache-dir", e.cache); !strings.Contains(out, "name the expected signer") {
		t.Fatalf("pull without a signer: %s", out)
	}
	key := filepath.Join(e.tools, "publisher.pub")
	if err := os.WriteFile(key, []byte("-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := e.run(t, false, "pull", e.reg.Addr+"/tools/reload:v1", "-o", e.tools, "--key", key, "--cache-dir", e.cache); !strings.Contains(out, "signature check failed: unsigned") {
		t.Fatalf("pull of an unsigned module: %s", out)
	}
	writeLock(t, e.tools, "reload", e.reg.Addr+"/tools/reload:v1", d1, "key = \"publisher.pub\"\napproved = []\n")
	s := e.serve(t)
	waitFor(t, 10*time.Second, "the refusal", func() bool {
		return strings.Contains(s.Stderr.String(), "check=signature")
	})
	c := newStdioClient(t, s)
	if got := callVersion(t, c); !strings.Contains(got, "-32602") {
		t.Fatalf("an unsigned tool was served: %s", got)
	}
}

// TestRegistryGrants: a module asking for grants is pending until
// approved; an update asking for more than was approved is refused on
// SIGHUP and the approved version keeps serving.
func TestRegistryGrants(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, false)
	e.push(t, "v1", "timeout = \"20s\"\n", "tools/reload:stable")
	out := e.run(t, true, "pull", e.reg.Addr+"/tools/reload:stable", "-o", e.tools, "--unsigned", "--cache-dir", e.cache)
	if !strings.Contains(out, `timeout = "20s"`) || !strings.Contains(out, "wasmcp approve reload") {
		t.Fatalf("pull: %s", out)
	}
	s := e.serve(t)
	c := newStdioClient(t, s)
	if got := callVersion(t, c); !strings.Contains(got, "-32602") {
		t.Fatalf("served before approval: %s", got)
	}
	if !strings.Contains(s.Stderr.String(), "check=approval") {
		t.Fatalf("no approval refusal logged:\n%s", s.Stderr)
	}
	e.run(t, true, "approve", "reload", "-o", e.tools)
	// An update asking for more is pushed to the tag before the SIGHUP:
	// the approved v1 is served, the update refused.
	e.push(t, "v2", "timeout = \"20s\"\nmemory = \"128MiB\"\n", "tools/reload:stable")
	if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitNote(t, c, "notifications/tools/list_changed", 30*time.Second)
	if got := callVersion(t, c); !strings.Contains(got, "version v1") {
		t.Fatalf("after approval: %s", got)
	}
	waitFor(t, 10*time.Second, "the update's refusal", func() bool {
		return strings.Contains(s.Stderr.String(), "update refused: it asks for more than was approved")
	})
	if !strings.Contains(s.Stderr.String(), `memory = \"128MiB\"`) {
		t.Fatalf("the refusal does not say what the update asks for:\n%s", s.Stderr)
	}
	lock, _ := os.ReadFile(filepath.Join(e.tools, "wasmcp.lock"))
	if !strings.Contains(string(lock), "pending_digest") {
		t.Fatalf("the update is not pending in the lock:\n%s", lock)
	}
	// Approved, the update is served on the next SIGHUP.
	e.run(t, true, "approve", "reload", "-o", e.tools)
	if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitNote(t, c, "notifications/tools/list_changed", 30*time.Second)
	if got := callVersion(t, c); !strings.Contains(got, "version v2") {
		t.Fatalf("after approving the update: %s", got)
	}
}

func runWasmcp(args ...string) (string, error) {
	out, err := exec.Command(wasmcpBin, args...).CombinedOutput()
	return string(out), err
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestRegistryPullInterval: with --pull-interval, a new version pushed to
// the followed tag that asks for no more than was approved replaces the
// old one (clients are told the list changed) and the lock's digest moves
// to it.
func TestRegistryPullInterval(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, false)
	e.push(t, "v1", "", "tools/reload:stable")
	e.run(t, true, "pull", e.reg.Addr+"/tools/reload:stable", "-o", e.tools, "--unsigned", "--cache-dir", e.cache)
	s := e.serve(t, "--pull-interval", "300ms", "--watch=false")
	c := newStdioClient(t, s)
	if got := callVersion(t, c); !strings.Contains(got, "version v1") {
		t.Fatalf("served: %s", got)
	}
	d2 := e.push(t, "v2", "", "tools/reload:stable")
	waitNote(t, c, "notifications/tools/list_changed", 30*time.Second)
	if got := callVersion(t, c); !strings.Contains(got, "version v2") {
		t.Fatalf("after the update: %s", got)
	}
	lock, _ := os.ReadFile(filepath.Join(e.tools, "wasmcp.lock"))
	if !strings.Contains(string(lock), d2) {
		t.Fatalf("the lock does not pin the update:\n%s", lock)
	}
}
