package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
	"github.com/wasmcp/wasmcp/internal/testkit/registrytest"
)

// How TestDocCommandBlocks runs the blocks marked run: the package comment
// of docblocks_test.go is the contract; this file keeps it.

// docBlockTimeout bounds one block (a build of a guest on a busy machine
// included).
const docBlockTimeout = 2 * time.Minute

// docClone is the fresh clone every page's blocks run in, made once.
var (
	docClone    built[string]
	docExamples built[string]
	docGoEnv    built[[]string]
)

// cloneForDocs clones the checkout into a directory named wasmcp (a block
// may name it: ../wasmcp/guest-sdk/rust). The clone is fresh each run, but
// its path is the same from run to run when no other test binary holds
// it: Go's build cache keys a package by its directory, so a warm cache
// then builds the clone's packages from the cache, as a user's second
// build in one clone does.
func cloneForDocs(t *testing.T, root string) string {
	return docClone.get(t, func() (string, error) {
		clone := filepath.Join(workDir, "doc", "wasmcp")
		if stable := stableCloneDir(); stable != "" {
			clone = stable
		}
		if out, err := exec.Command("git", "clone", "-q", root, clone).CombinedOutput(); err != nil {
			return "", fmt.Errorf("git clone: %v\n%s", err, out)
		}
		return clone, nil
	})
}

// docCloneLock holds the stable clone's directory for this test binary
// (the lock ends with the process; kept referenced so it stays open).
var docCloneLock *os.File

// stableCloneDir returns the same clone path each run, emptied, locked
// for this test binary, or "" when another one holds it.
func stableCloneDir() string {
	base := filepath.Join(os.TempDir(), "wasmcp-doc-clone")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return ""
	}
	f, err := os.OpenFile(filepath.Join(base, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return ""
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return ""
	}
	docCloneLock = f
	dir := filepath.Join(base, "wasmcp")
	if err := os.RemoveAll(dir); err != nil {
		return ""
	}
	return dir
}

// goEnvForDocs pins what a temporary HOME would otherwise move: Go's build
// and module caches and the machine's Go settings stay the machine's.
func goEnvForDocs(t *testing.T) []string {
	return docGoEnv.get(t, func() ([]string, error) {
		keys := []string{"GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN"}
		out, err := exec.Command("go", append([]string{"env", "-json"}, keys...)...).Output()
		if err != nil {
			return nil, fmt.Errorf("go env: %w", err)
		}
		var m map[string]string
		if err := json.Unmarshal(out, &m); err != nil {
			return nil, fmt.Errorf("go env: %w", err)
		}
		var env []string
		for _, k := range keys {
			env = append(env, k+"="+m[k])
		}
		return env, nil
	})
}

// examplesForDocs builds the example tools in the clone as the README
// says, once, and returns their directory.
func examplesForDocs(t *testing.T, clone string, env []string) string {
	return docExamples.get(t, func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "run", "./examples/wasm/build")
		cmd.Dir, cmd.Env = clone, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go run ./examples/wasm/build: %v\n%s", err, out)
		}
		return filepath.Join(clone, "examples", "wasm", "bin"), nil
	})
}

// docPage is the state one page's blocks share: a HOME, the directory
// the next block starts in, a registry.
type docPage struct {
	root, clone, home, cwd string
	env                    []string
	files                  map[string]string // file blocks waiting for the next run block
	registry               string            // the page's docker-registry, when a block names registry.example
}

// runDocPages runs every page's run blocks, in order, one subtest each.
func runDocPages(t *testing.T, root string, pages [][]docBlock) {
	clone := cloneForDocs(t, root)
	goEnv := goEnvForDocs(t)
	bin := filepath.Join(workDir, "doc", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(wasmcpBin, filepath.Join(bin, "wasmcp")); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	cache := filepath.Join(workDir, "doc", "cache") // wasmcp's compilation cache, shared as on one machine
	for i, page := range pages {
		if !slices.ContainsFunc(page, func(b docBlock) bool { return b.mode == "run" }) {
			continue
		}
		p := &docPage{root: root, clone: clone, files: map[string]string{}}
		p.home = filepath.Join(workDir, "doc", fmt.Sprintf("home%d", i))
		p.cwd = filepath.Join(workDir, "doc", fmt.Sprintf("page%d", i))
		for _, d := range []string{p.home, p.cwd} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k != "GOBIN" && !strings.HasPrefix(k, "XDG_") {
				p.env = append(p.env, kv)
			}
		}
		p.env = append(p.env, goEnv...)
		p.env = append(p.env, "HOME="+p.home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"GOPATH="+filepath.Join(p.home, "go"), "XDG_CACHE_HOME="+cache,
			// npm's downloads are kept between runs, as on a user's machine.
			"npm_config_cache="+filepath.Join(os.TempDir(), "wasmcp-doc-npm-cache"), "npm_config_update_notifier=false",
			"XDG_CONFIG_HOME="+filepath.Join(p.home, ".config"), "XDG_DATA_HOME="+filepath.Join(p.home, ".local", "share"))
		// One subtest a page, one inside it a block: what the page's
		// blocks share (a registry) lives as long as the page.
		t.Run(strings.ReplaceAll(page[0].file, "/", "_"), func(t *testing.T) {
			for _, b := range page {
				if b.mode == "run" && strings.Contains(b.text, "registry.example") && p.registry == "" {
					p.registry = registrytest.Start(t, false).Addr
				}
			}
			for _, b := range page {
				switch b.mode {
				case "file":
					p.files[b.reason] = b.text + "\n"
				case "run":
					t.Run(fmt.Sprint(b.line), func(t *testing.T) { p.run(t, b) })
					p.files = map[string]string{}
				}
			}
		})
	}
}

// run runs one block.
func (p *docPage) run(t *testing.T, b docBlock) {
	if need, ok := b.opts["needs"]; ok {
		if _, err := exec.LookPath(need); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s needs %s, which CI installs (.ci/run)", b.name(), need)
			}
			t.Skipf("%s is not installed", need)
		}
	}
	if b.opts["dir"] == "repo" {
		p.cwd = p.clone
	} else if v, ok := b.opts["dir"]; ok {
		t.Fatalf("dir=%s: only dir=repo is known", v)
	}
	for name, text := range p.files {
		if err := os.WriteFile(filepath.Join(p.cwd, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := strings.ReplaceAll(b.text, "~/src/wasmcp", p.clone)
	text = strings.ReplaceAll(text, "/path/to/wasmcp", p.clone)
	text = strings.ReplaceAll(text, "registry.example", p.registry)
	_, examples := b.opts["examples"]
	_, serve := b.opts["serve"]
	if examples || serve {
		examplesForDocs(t, p.clone, p.env)
	}
	if serve {
		s := e2e.StartServe(t, wasmcpBin, p.env, "--tools", filepath.Join(p.clone, "examples", "wasm", "bin"), "--http", "127.0.0.1:0")
		s.WaitLoaded(t)
		text = strings.ReplaceAll(text, "127.0.0.1:8080", strings.TrimSuffix(strings.TrimPrefix(s.URL, "http://"), "/mcp"))
	}
	p.smallModules(t, text)

	// The block runs from p.cwd; where it ends is where the next starts.
	end := filepath.Join(p.home, ".doc-test-cwd")
	script := fmt.Sprintf("cd %q\ntrap 'pwd > %q' EXIT\n%s\n", p.cwd, end, text)
	if _, ok := b.opts["server"]; ok {
		p.runServer(t, b, regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(script, "127.0.0.1:0"))
	} else {
		p.runToEnd(t, b, script)
	}
	if d, err := os.ReadFile(end); err == nil {
		p.cwd = strings.TrimSpace(string(d))
	}
}

// smallModules puts a small module in place of each .wasm file the block
// uses but neither builds nor finds (echo.wasm in a publishing story).
func (p *docPage) smallModules(t *testing.T, text string) {
	if strings.Contains(text, "build") || strings.Contains(text, "clang") {
		return
	}
	small, err := os.ReadFile(filepath.Join(p.root, "tests", "testdata", "small", "small.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range regexp.MustCompile(`(?:^|\s)(\w+\.wasm)\b`).FindAllStringSubmatch(text, -1) {
		path := filepath.Join(p.cwd, w[1])
		if strings.Contains(text, "-o "+w[1]) {
			continue
		}
		if _, err := os.Stat(path); os.IsNotExist(err) {
			if err := os.WriteFile(path, small, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// initializeAndList is what a wasmcp serve on stdio in a block reads.
var initializeAndList = strings.Join([]string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"doc","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, ""}, "\n")

// runToEnd runs a block that ends by itself.
func (p *docPage) runToEnd(t *testing.T, b docBlock, script string) {
	ctx, cancel := context.WithTimeout(context.Background(), docBlockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Env = p.env
	cmd.Stdin = strings.NewReader(initializeAndList)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v after %s\n--- block\n%s\n--- output\n%s", b.name(), err, time.Since(start).Round(time.Millisecond), b.text, e2e.Tail(string(out), 16<<10))
	}
	if strings.Contains(b.text, "wasmcp serve") {
		if !strings.Contains(string(out), `"id":2,"result":{"tools":[`) {
			t.Fatalf("%s: wasmcp serve answered no tools/list\n--- output\n%s", b.name(), e2e.Tail(string(out), 16<<10))
		}
	}
	if want := b.opts["expect"]; !strings.Contains(string(out), want) {
		t.Fatalf("%s: the output lacks %q\n--- output\n%s", b.name(), want, e2e.Tail(string(out), 16<<10))
	}
	t.Logf("%s ran in %s; its output:\n%s", b.name(), time.Since(start).Round(time.Millisecond), e2e.Tail(string(out), 4<<10))
}

// runServer runs a block that serves until stopped: it waits for the
// listener's URL in the log, lists the tools over HTTP, then ends the
// block's processes with SIGTERM.
func (p *docPage) runServer(t *testing.T, b docBlock, script string) {
	cmd := exec.Command("bash", "-e", "-c", script)
	cmd.Env = p.env
	out := &e2e.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("%s: still running 15 s after SIGTERM", b.name())
		}
	}()
	re := regexp.MustCompile(`url=(https?://\S+/mcp)`)
	var url string
	e2e.WaitFor(t, docBlockTimeout, "the block's server to listen", func() bool {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
			return true
		}
		select {
		case <-done:
			t.Fatalf("%s ended before it served\n--- block\n%s\n--- output\n%s", b.name(), b.text, e2e.Tail(out.String(), 16<<10))
		default:
		}
		return false
	})
	client := http.DefaultClient
	if m := regexp.MustCompile(`--tls-cert\s+(\S+)`).FindStringSubmatch(b.text); m != nil {
		certFile := strings.Replace(m[1], "~", p.home, 1)
		if !filepath.IsAbs(certFile) {
			certFile = filepath.Join(p.cwd, certFile)
		}
		pem, err := os.ReadFile(certFile)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatalf("%s: no certificate", certFile)
		}
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	}
	// The first list holds what loaded within --ready-wait; a client
	// lists again on list_changed, as this does until a tool is there.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + e2e.WithMeta("{}",
		`{"io.modelcontextprotocol/protocolVersion":"`+e2e.ModernVersion+`","io.modelcontextprotocol/clientCapabilities":{}}`) + `}`
	var last string
	defer func() {
		if t.Failed() {
			t.Logf("the last tools/list answered: %.600s", last)
		}
	}()
	e2e.WaitFor(t, docBlockTimeout, "a tool in the block's server's tools/list", func() bool {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", e2e.ModernVersion)
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: tools/list at %s: %v\n--- output\n%s", b.name(), url, err, e2e.Tail(out.String(), 16<<10))
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: tools/list at %s: %s %.600s", b.name(), url, resp.Status, got)
		}
		last = string(got)
		if strings.Contains(last, `"tools":[{`) {
			return true
		}
		time.Sleep(200 * time.Millisecond)
		return false
	})
	t.Logf("%s served %s and listed its tools in %s", b.name(), url, time.Since(start).Round(time.Millisecond))
}
