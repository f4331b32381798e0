package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowStartTools is a tools directory of two WAT modules: small
// (testdata/small, which loads in milliseconds) and slowstart
// (testdata/slowstart, whose every instance, its describe run at load
// included, sleeps 5 s before it serves).
func slowStartTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"small/small.wasm", "slowstart/slowstart.wasm"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadedYet reports whether the server logged the end of its initial load.
func loadedYet(s *served) bool { return strings.Contains(s.Stderr.String(), "modules loaded") }

// TestStdioAnswersDuringTheInitialLoad: over stdio, initialize is answered
// while a module is still loading (its describe run takes 5 s), a call of
// the module that has loaded is answered before the load ends, a call of
// the slow module waits for that module, and tools/list, which waits for
// the load under --ready-wait 0, lists both.
func TestStdioAnswersDuringTheInitialLoad(t *testing.T) {
	t.Parallel()
	tools := slowStartTools(t)
	// A cache of its own: the description cache must not hold slowstart's
	// description, or it would be listed without a describe run.
	// --ready-wait 0: tools/list waits for the whole load (the default
	// answers after 2 s with what is loaded: TestListDoesNotWaitForTheSlowest).
	s := startServeLoading(t, "--tools", tools, "--cache-dir", t.TempDir(), "--watch=false", "--describe-timeout", "60s", "--ready-wait", "0")
	c := newStdioClient(t, s) // initialize
	if loadedYet(s) {
		t.Fatal("the load ended before initialize was answered: the test proves nothing")
	}
	if r := c.request("tools/call", `{"name":"small_hello","arguments":{}}`, nil); !strings.Contains(r, "hello from small v1") {
		t.Fatalf("the loaded module's call: %s", r)
	}
	if loadedYet(s) {
		t.Fatal("the load ended before the loaded module's call was answered")
	}
	if r := c.request("tools/call", `{"name":"slow_hello","arguments":{}}`, nil); !strings.Contains(r, "hello from slowstart") {
		t.Fatalf("the slow module's call (which waits for its module): %s", r)
	}
	list := c.request("tools/list", `{}`, nil)
	if !strings.Contains(list, `"small_hello"`) || !strings.Contains(list, `"slow_hello"`) {
		t.Fatalf("tools/list: %s", list)
	}
	if !loadedYet(s) {
		t.Fatal("tools/list answered before the load ended")
	}
}

// TestHTTPServesDuringTheInitialLoad: over HTTP the listener serves at
// once: initialize is answered and /readyz answers 503 while a module is
// still loading; /readyz turns 200 when the load ends.
func TestHTTPServesDuringTheInitialLoad(t *testing.T) {
	t.Parallel()
	tools := slowStartTools(t)
	s := startServeLoading(t, "--tools", tools, "--http", "127.0.0.1:0", "--cache-dir", t.TempDir(), "--watch=false", "--describe-timeout", "60s")
	readyz := strings.TrimSuffix(s.URL, "/mcp") + "/readyz"
	init := httpDo(t, http.MethodPost, s.URL, nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	if init.status != 200 || !strings.Contains(init.body, `"serverInfo"`) {
		t.Fatalf("initialize during the load: %d %s", init.status, init.body)
	}
	r := httpDo(t, http.MethodGet, readyz, nil, "")
	if loadedYet(s) {
		t.Fatal("the load ended before initialize was answered: the test proves nothing")
	}
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "catalog not loaded") {
		t.Fatalf("/readyz during the load: %d %s", r.status, r.body)
	}
	c := &httpClient{t: t, url: s.URL}
	if got := c.request("tools/call", `{"name":"small_hello","arguments":{}}`, nil); !strings.Contains(got, "hello from small v1") {
		t.Fatalf("the loaded module's call: %s", got)
	}
	if loadedYet(s) {
		t.Fatal("the load ended before the loaded module's call was answered")
	}
	if got := c.request("tools/call", `{"name":"slow_hello","arguments":{}}`, nil); !strings.Contains(got, "hello from slowstart") {
		t.Fatalf("the slow module's call (which waits for its module): %s", got)
	}
	waitFor(t, 60*time.Second, "/readyz to answer 200", func() bool {
		return httpDo(t, http.MethodGet, readyz, nil, "").status == 200
	})
	if !loadedYet(s) {
		t.Fatal("/readyz answered 200 before the load ended")
	}
}
