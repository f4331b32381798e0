package abuse

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

var (
	// wasmcpBin is the wasmcp command built for this run (without -race:
	// the figures are the real binary's).
	wasmcpBin string
	// toolsDir holds the small test guest (tests/testdata/small).
	toolsDir string
	// cacheDir is the compilation cache shared with the other tests.
	cacheDir = filepath.Join(os.TempDir(), "wasmcp-test-cache")
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if runtime.GOOS != "linux" {
		fmt.Println("abuse: skipped: the suite reads /proc")
		return 0
	}
	dir, err := os.MkdirTemp("", "wasmcp-abuse-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if wasmcpBin, err = e2e.BuildWasmcp(context.Background(), dir, false); err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		return 1
	}
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		return 1
	}
	toolsDir = filepath.Join(dir, "tools")
	wasm, err := os.ReadFile(filepath.Join(root, "tests", "testdata", "small", "small.wasm"))
	if err == nil {
		err = os.MkdirAll(toolsDir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(toolsDir, "small.wasm"), wasm, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		return 1
	}
	return m.Run()
}

// server is a running wasmcp serve --http.
type server struct {
	cmd  *exec.Cmd
	log  *e2e.LockedBuffer
	url  string // http://127.0.0.1:PORT/mcp
	addr string // 127.0.0.1:PORT
	pid  int
}

// startServer starts wasmcp serve on a free loopback port with extra
// flags; it is stopped when the test ends.
func startServer(t *testing.T, extra ...string) *server {
	t.Helper()
	s := &server{log: &e2e.LockedBuffer{}}
	args := append([]string{"serve", "--tools", toolsDir, "--http", "127.0.0.1:0", "--cache-dir", cacheDir, "--watch=false", "--data-dir", "-"}, extra...)
	s.cmd = exec.Command(wasmcpBin, args...)
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.pid = s.cmd.Process.Pid
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			out := s.log.String()
			if len(out) > 8000 {
				out = "…" + out[len(out)-8000:]
			}
			t.Logf("wasmcp log:\n%s", out)
		}
	})
	re := regexp.MustCompile(`url=http://(\S+)/mcp`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(s.log.String()); m != nil {
			s.addr, s.url = m[1], "http://"+m[1]+"/mcp"
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start:\n%s", s.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

// statusKiB reads a "Name: N kB" line of /proc/PID/status.
func (s *server) statusKiB(t *testing.T, name string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", name, s.pid)
	return 0
}

// peakMiB is the process's peak resident memory so far (VmHWM).
func (s *server) peakMiB(t *testing.T) float64 { return float64(s.statusKiB(t, "VmHWM")) / 1024 }

// rssMiB is the process's resident memory now (VmRSS).
func (s *server) rssMiB(t *testing.T) float64 { return float64(s.statusKiB(t, "VmRSS")) / 1024 }

// cpuTicks is the CPU time the process used so far, user and system, in
// clock ticks (USER_HZ, 100 per second on Linux).
func (s *server) cpuTicks(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces: fields count from
	// the last ')'. utime and stime are fields 14 and 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", s.pid, b)
	}
	return u + st
}

const ticksPerSecond = 100

// idleWindow and idleShare define idle: less than idleShare of one core
// over idleWindow.
const (
	idleWindow = 300 * time.Millisecond
	idleShare  = 0.10
)

// waitIdle waits until the server's CPU use falls to idle and returns how
// long that took; it fails the test when that takes longer than within.
func (s *server) waitIdle(t *testing.T, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		t0, c0 := time.Now(), s.cpuTicks(t)
		time.Sleep(idleWindow)
		used := float64(s.cpuTicks(t)-c0) / ticksPerSecond
		if used <= idleShare*time.Since(t0).Seconds() {
			return time.Since(start) - idleWindow
		}
		if time.Since(start) > within+idleWindow {
			t.Fatalf("the server still uses %.0f%% of a core %v after the attacker left", 100*used/time.Since(t0).Seconds(), time.Since(start).Round(time.Millisecond))
		}
	}
}

// logged fails the test unless the server's log holds each of the phrases
// (waiting a little: log lines follow the events).
func (s *server) logged(t *testing.T, phrases ...string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for _, p := range phrases {
		for !strings.Contains(s.log.String(), p) {
			if time.Now().After(deadline) {
				t.Errorf("the log does not say %q", p)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// from is a dialer whose connections leave from a loopback address: the
// attacker uses 127.0.0.2 and up, the ordinary client 127.0.0.1, so that
// the per-address caps tell them apart.
func from(ip string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
}

// clientFrom is an HTTP client whose connections leave from ip.
func clientFrom(ip string, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: from(ip).DialContext, MaxIdleConnsPerHost: 64, DisableCompression: true}}
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// post sends one JSON-RPC message with headers and returns the status and
// the body.
func post(c *http.Client, url string, hdr map[string]string, body string) (int, http.Header, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

// initialize opens a legacy session at version and returns its id.
func initialize(c *http.Client, url, version string) (string, error) {
	st, hdr, body, err := post(c, url, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"abuse","version":"1"}}}`)
	if err != nil {
		return "", err
	}
	sid := hdr.Get("Mcp-Session-Id")
	if st != 200 || sid == "" {
		return "", fmt.Errorf("initialize: %d %s", st, body)
	}
	if st, _, body, err := post(c, url, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || st != 202 {
		return "", fmt.Errorf("notifications/initialized: %d %s %v", st, body, err)
	}
	return sid, nil
}

// legit is the ordinary client: from 127.0.0.1, every 50 ms, a
// 2026-07-28 tools/call and a tools/call in its own legacy session.
type legit struct {
	ok     atomic.Int64
	mu     sync.Mutex
	errs   []string
	cancel context.CancelFunc
	done   chan struct{}
}

func startLegit(t *testing.T, s *server) *legit {
	t.Helper()
	c := clientFrom("127.0.0.1", 5*time.Second)
	sid, err := initialize(c, s.url, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &legit{cancel: cancel, done: make(chan struct{})}
	// The attack starts once the client's first round is answered: the
	// first call may compile the module (a second or more under -race),
	// and a session left idle that long is, rightly, the idlest one a
	// session flood pushes out; the client's session is in use only once
	// it calls every 50 ms.
	warm := make(chan struct{})
	fail := func(what string, st int, body string, err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(l.errs) < 10 {
			l.errs = append(l.errs, fmt.Sprintf("%s: status %d, error %v, body %.200s", what, st, err, body))
		}
	}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for id := 1; ; id++ {
			st, _, body, err := post(c, s.url, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "small_hello"},
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"small_hello","arguments":{},%s}}`, id, meta))
			if err != nil || st != 200 || !strings.Contains(body, `"result"`) {
				fail("2026-07-28 tools/call", st, body, err)
			} else {
				l.ok.Add(1)
			}
			st, _, body, err = post(c, s.url, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25", "Accept": "application/json"},
				fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"small_hello","arguments":{}}}`, id))
			if err != nil || st != 200 || !strings.Contains(body, `"result"`) {
				fail("session tools/call", st, body, err)
			} else {
				l.ok.Add(1)
			}
			if id == 1 {
				close(warm)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	select {
	case <-warm:
	case <-time.After(60 * time.Second):
		t.Fatal("the ordinary client's first calls took over 60 s")
	}
	return l
}

// stop ends the client and fails the test unless every call succeeded
// (and there were some).
func (l *legit) stop(t *testing.T) {
	t.Helper()
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) > 0 {
		t.Errorf("the ordinary client's calls failed (%d succeeded):\n  %s", l.ok.Load(), strings.Join(l.errs, "\n  "))
	}
	if l.ok.Load() < 10 {
		t.Errorf("the ordinary client made only %d calls", l.ok.Load())
	}
}

// run is one attack: start the ordinary client, run attack (which returns
// once the attacker is gone), then check the client, the CPU going idle
// and the peak memory against boundMiB.
func run(t *testing.T, s *server, boundMiB float64, attack func()) {
	t.Helper()
	base := s.rssMiB(t)
	l := startLegit(t, s)
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	attack()
	attackFor := time.Since(start)
	l.stop(t)
	idle := s.waitIdle(t, 2*time.Second)
	peak := s.peakMiB(t)
	t.Logf("attack %v; RSS at start %.1f MiB, peak %.1f MiB (bound %.0f MiB); idle %v after the attacker left; %d ordinary calls succeeded",
		attackFor.Round(time.Millisecond), base, peak, boundMiB, idle.Round(10*time.Millisecond), l.ok.Load())
	if peak > boundMiB {
		t.Errorf("peak RSS %.1f MiB over the bound of %.0f MiB", peak, boundMiB)
	}
}
