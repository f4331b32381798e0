package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Hot reload of the tools directory of a running wasmcp serve, over stdio
// and over HTTP. The guest is tests/testdata/reload built twice, as v1 and
// v2; both are compiled into a compilation cache shared by the servers of
// this test run, so a swap costs the settle window plus a cached load.

var reloadGuests struct {
	once     sync.Once
	v1, v2   []byte
	cacheDir string
	err      error
}

// reloadBuild builds the two versions of the reload guest and warms the
// shared compilation cache with them (wasmcp inspect compiles as serve
// does).
func reloadBuild(t *testing.T) (v1, v2 []byte, cacheDir string) {
	t.Helper()
	g := &reloadGuests
	g.once.Do(func() {
		dir := filepath.Join(workDir, "reload")
		g.cacheDir = filepath.Join(workDir, "reload-cache")
		for _, v := range []string{"v1", "v2"} {
			out := filepath.Join(dir, v+".wasm")
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -X main.version="+v, "-o", out, "./testdata/reload")
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				g.err = &buildError{v, string(b), err}
				return
			}
			if b, err := exec.Command(wasmcpBin, "inspect", "--cache-dir", g.cacheDir, out).CombinedOutput(); err != nil {
				g.err = &buildError{v + " (inspect)", string(b), err}
				return
			}
		}
		g.v1, g.err = os.ReadFile(filepath.Join(dir, "v1.wasm"))
		if g.err == nil {
			g.v2, g.err = os.ReadFile(filepath.Join(dir, "v2.wasm"))
		}
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	return g.v1, g.v2, g.cacheDir
}

type buildError struct {
	what, out string
	err       error
}

func (e *buildError) Error() string {
	return "building the reload guest " + e.what + ": " + e.err.Error() + "\n" + e.out
}

func TestReloadStdio(t *testing.T) {
	t.Parallel()
	v1, v2, cache := reloadBuild(t)
	dir := t.TempDir()
	s := startServe(t, "--tools", dir, "--cache-dir", cache)
	c := newStdioClient(t, s)
	reloadScenario(t, dir, s, c, c, v1, v2)
}

func TestReloadHTTP(t *testing.T) {
	t.Parallel()
	v1, v2, cache := reloadBuild(t)
	dir := t.TempDir()
	s := startServe(t, "--tools", dir, "--cache-dir", cache, "--http", "127.0.0.1:0")
	// One stream asks for tool changes; another asks only for prompt
	// changes and must get nothing else.
	tools := newHTTPClient(t, s.URL, `{"toolsListChanged":true}`)
	prompts := newHTTPClient(t, s.URL, `{"promptsListChanged":true}`)
	// A legacy session's GET stream gets every kind.
	legacy := openLegacySession(t, s.URL)
	reloadScenario(t, dir, s, tools, tools, v1, v2)

	// add, replace (the prompt's description names the version), delete
	countNotes(t, prompts.notes(), "notifications/prompts/list_changed", 3, true)
	countNotes(t, legacy, "notifications/tools/list_changed", 3, false)
}

// countNotes waits for want notifications named method on ch. With only,
// any other notification (up to then, or already buffered after) fails the
// test, and each must carry its listen stream's subscriptionId.
func countNotes(t *testing.T, ch <-chan string, method string, want int, only bool) {
	t.Helper()
	check := func(msg string) bool {
		if only && noteMethod(msg) != method {
			t.Fatalf("a stream that asked only for %s got %s", method, msg)
		}
		if only && !strings.Contains(msg, "io.modelcontextprotocol/subscriptionId") {
			t.Fatalf("listen notification without its subscriptionId: %s", msg)
		}
		return noteMethod(msg) == method
	}
	deadline := time.After(10 * time.Second)
	for n := 0; n < want; {
		select {
		case msg := <-ch:
			if check(msg) {
				n++
			}
		case <-deadline:
			t.Fatalf("got %d %s, want %d", n, method, want)
		}
	}
	for {
		select {
		case msg := <-ch:
			check(msg)
		default:
			return
		}
	}
}

// reloadScenario: add → list_changed → call; replace while a slow call
// runs → the slow call ends on v1, the next call sees v2; a broken file →
// refused, v2 still served; delete → tools, resources and prompts gone,
// -32602 on call.
func reloadScenario(t *testing.T, dir string, s *served, c mcpClient, notes mcpClient, v1, v2 []byte) {
	const notice = 30 * time.Second // a cached load takes well under a second; slack for loaded CI machines
	call := func(tool, args string) string {
		return c.request("tools/call", `{"name":"`+tool+`","arguments":`+args+`}`, nil)
	}

	if got := call("reload_version", `{}`); !strings.Contains(got, "-32602") {
		t.Fatalf("before add: %s", got)
	}
	// One instance at a time, so that a second call queues behind a
	// running one.
	deployFile(t, dir, "reload.policy.toml", []byte("max_instances = 1\nmax_queue = 4\n"))
	deployFile(t, dir, "reload.wasm", v1)
	waitNote(t, notes, "notifications/tools/list_changed", notice)
	if got := call("reload_version", `{}`); !strings.Contains(got, "version v1") {
		t.Fatalf("after add: %s", got)
	}
	if got := c.request("tools/list", `{}`, nil); !strings.Contains(got, "(v1)") {
		t.Fatalf("tools/list after add: %s", got)
	}

	// A slow call starts on v1 (its progress notification says so) and is
	// still running when v2 is swapped in.
	started := make(chan struct{})
	var once sync.Once
	slow := make(chan string, 1)
	go func() {
		slow <- c.request("tools/call", `{"name":"reload_slow","arguments":{"ms":12000}}`, func(string) {
			once.Do(func() { close(started) })
		})
	}()
	select {
	case <-started:
	case <-time.After(notice):
		t.Fatal("the slow call did not start")
	}
	// A second call finds v1 in the catalog and waits for v1's only
	// instance slot; it must run on v1 after the swap (v1 stays open
	// until its last call ends). The round trip after it gives the server
	// time to take it in; the swap itself comes a settle window later.
	queued := make(chan string, 1)
	go func() { queued <- call("reload_slow", `{"ms":1}`) }()
	c.request("tools/list", `{}`, nil)
	deployFile(t, dir, "reload.wasm", v2)
	waitNote(t, notes, "notifications/tools/list_changed", notice)
	if got := call("reload_version", `{}`); !strings.Contains(got, "version v2") {
		t.Fatalf("after replace: %s", got)
	}
	select {
	case got := <-slow:
		t.Fatalf("the slow call ended before the swap was seen (%s); the test proves nothing", got)
	default:
	}
	if got := <-slow; !strings.Contains(got, "slow done on v1") {
		t.Fatalf("the slow call that started on v1: %s", got)
	}
	if got := <-queued; !strings.Contains(got, "slow done on v1") {
		t.Fatalf("the call queued on v1 before the swap: %s", got)
	}
	if got := call("reload_slow", `{"ms":1}`); !strings.Contains(got, "slow done on v2") {
		t.Fatalf("a call after the swap: %s", got)
	}

	// A broken module is refused with a log line naming the file and the
	// reason; v2 keeps serving.
	deployFile(t, dir, "reload.wasm", []byte("\x00asm\x01\x00\x00\x00not a module"))
	path := filepath.Join(dir, "reload.wasm")
	waitFor(t, notice, "the refusal", func() bool {
		for _, line := range strings.Split(s.Stderr.String(), "\n") {
			if strings.Contains(line, "module refused") && strings.Contains(line, path) && strings.Contains(line, "does not compile") {
				return true
			}
		}
		return false
	})
	if got := call("reload_version", `{}`); !strings.Contains(got, "version v2") {
		t.Fatalf("after a broken replacement: %s", got)
	}

	// Delete: tools, resources and prompts go away.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitNote(t, notes, "notifications/tools/list_changed", notice)
	if got := call("reload_version", `{}`); !strings.Contains(got, "-32602") {
		t.Fatalf("after delete: %s", got)
	}
	for _, m := range []string{"tools/list", "resources/list", "prompts/list"} {
		if got := c.request(m, `{}`, nil); strings.Contains(got, "reload") || !strings.Contains(got, `"result"`) {
			t.Fatalf("%s after delete: %s", m, got)
		}
	}
}

func TestReloadSIGHUP(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGHUP on Windows")
	}
	t.Parallel()
	v1, _, cache := reloadBuild(t)
	dir := t.TempDir()
	s := startServe(t, "--tools", dir, "--cache-dir", cache, "--watch=false")
	c := newStdioClient(t, s)
	deployFile(t, dir, "reload.wasm", v1)
	// Not watching: the module is not picked up by itself. A request
	// round trip after a settle window shows nothing changed.
	time.Sleep(300 * time.Millisecond)
	if got := c.request("tools/call", `{"name":"reload_version","arguments":{}}`, nil); !strings.Contains(got, "-32602") {
		t.Fatalf("loaded without watching: %s", got)
	}
	select {
	case msg := <-c.notes():
		t.Fatalf("notification without watching: %s", msg)
	default:
	}
	if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitNote(t, c, "notifications/tools/list_changed", 30*time.Second)
	if got := c.request("tools/call", `{"name":"reload_version","arguments":{}}`, nil); !strings.Contains(got, "version v1") {
		t.Fatalf("after SIGHUP: %s", got)
	}
}
