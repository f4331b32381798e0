package scaleout

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
	"github.com/wasmcp/wasmcp/internal/testkit/redistest"
)

var (
	// wasmcpBin is the wasmcp command built for this run; toolsDir holds
	// the conformance fixture's task tools and tests/testdata/taskguest.
	wasmcpBin, toolsDir string
	// compileCache is shared with the other test packages.
	compileCache = filepath.Join(os.TempDir(), "wasmcp-test-cache")
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wasmcp-scaleout-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	if wasmcpBin, err = e2e.BuildWasmcp(ctx, dir, false); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		return 1
	}
	toolsDir = filepath.Join(dir, "tools")
	for src, out := range map[string]string{"../conformance/fixture/tasks": "tasks.wasm",
		"../conformance/fixture/interactive": "interactive.wasm", "../testdata/taskguest": "taskguest.wasm"} {
		if err := guestbuild.Build(ctx, src, filepath.Join(toolsDir, out)); err != nil {
			fmt.Fprintln(os.Stderr, "scaleout:", err)
			return 1
		}
	}
	return m.Run()
}

// lease is the replicas' --task-lease in these tests.
const lease = 2 * time.Second

// replica is one `wasmcp serve --http` process on a fixed loopback port.
type replica struct {
	t      *testing.T
	port   int
	args   []string
	cmd    *exec.Cmd
	stderr *e2e.LockedBuffer
	done   chan struct{}
}

// startReplica starts a replica sharing its tasks in the Redis at
// redisURL, on port (0: a free one).
func startReplica(t *testing.T, redisURL string, port int, extra ...string) *replica {
	t.Helper()
	if port == 0 {
		port = redistest.FreePort(t)
	}
	r := &replica{t: t, port: port}
	r.args = append([]string{"serve", "--tools", toolsDir, "--http", "127.0.0.1:" + strconv.Itoa(port),
		"--watch=false", "--cache-dir", compileCache, "--store", redisURL, "--task-lease", lease.String(),
		"--task-inline-ms", "0", "--allowed-hosts", "127.0.0.1",
		// Compiled code from the start: these tests time Redis outages
		// against calls, and while a module compiles its interpreted
		// calls are bounded engine-wide (docs/design/interpreter-tier.md),
		// which can hold every call past an outage's window.
		"--interpreter-first=false"}, extra...)
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) start() {
	r.t.Helper()
	r.stderr = &e2e.LockedBuffer{}
	r.cmd = exec.Command(wasmcpBin, r.args...)
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(r.cmd, r.done)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(r.stderr.String(), "url=http://") {
		select {
		case <-r.done:
			r.t.Fatalf("wasmcp serve exited:\n%s", r.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("wasmcp serve did not listen:\n%s", r.stderr)
		}
	}
}

// url is the replica's MCP endpoint.
func (r *replica) url() string { return "http://127.0.0.1:" + strconv.Itoa(r.port) + "/mcp" }

// kill ends the replica with SIGKILL: nothing is cleaned up.
func (r *replica) kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

func (r *replica) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
	r.cmd = nil
	if r.t.Failed() {
		r.t.Logf("replica :%d stderr:\n%s", r.port, r.stderr)
	}
}

// haproxyConfig is the load balancer of docs/scale-out.md on loopback:
// round-robin per request, and a legacy session (Mcp-Session-Id, learnt
// from the initialize response) kept on the replica that minted it.
func haproxyConfig(port int, backends []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout tunnel 1h
    retry-on conn-failure empty-response
    retries 2
    option redispatch

frontend mcp
    bind 127.0.0.1:%d
    default_backend wasmcp

backend wasmcp
    balance roundrobin
    stick-table type string len 64 size 1m expire 1h
    stick on req.hdr(Mcp-Session-Id)
    stick store-response res.hdr(Mcp-Session-Id)
`, port)
	for i, p := range backends {
		fmt.Fprintf(&b, "    server r%d 127.0.0.1:%d check inter 500ms fall 2 rise 1\n", i+1, p)
	}
	return b.String()
}

// startProxy starts HAProxy in front of the replicas' ports and returns
// its MCP endpoint.
func startProxy(t *testing.T, backends ...int) string {
	t.Helper()
	bin := redistest.Need(t, "haproxy", "haproxy")
	port := redistest.FreePort(t)
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(haproxyConfig(port, backends)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := &e2e.LockedBuffer{}
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("haproxy:\n%s", out)
		}
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			t.Fatalf("haproxy exited:\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not listen:\n%s", out)
		}
	}
	return "http://" + addr + "/mcp"
}

// cluster is Redis (append-only) and n replicas.
func cluster(t *testing.T, n int, extra ...string) (*redistest.Server, []*replica) {
	t.Helper()
	redistest.Need(t, "haproxy", "haproxy")
	srv := redistest.Start(t, true)
	var rs []*replica
	for i := 0; i < n; i++ {
		rs = append(rs, startReplica(t, srv.URL(), 0, extra...))
	}
	return srv, rs
}

// --- a 2026-07-28 client ----------------------------------------------------

const modernVersion = "2026-07-28"

// clientMeta declares the tasks extension and elicitation.
const clientMeta = `{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{}}}`

var nextID atomic.Int64

// reply is one JSON-RPC answer.
type reply struct {
	status int
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

func (r reply) String() string { return fmt.Sprintf("HTTP %d %s", r.status, r.raw) }

func withMeta(params string) string {
	params = strings.TrimSpace(params)
	if params == "" || params == "{}" {
		return `{"_meta":` + clientMeta + `}`
	}
	return `{"_meta":` + clientMeta + `,` + params[1:]
}

// call sends a modern request to url and returns its answer (the last
// message of an SSE stream). A transport error is returned as err.
func call(ctx context.Context, url, method, params string) (reply, error) {
	return callAs(ctx, url, "", method, params)
}

// callAs is call with an Authorization header (none when authz is "").
func callAs(ctx context.Context, url, authz, method, params string) (reply, error) {
	var p struct {
		Name   string `json:"name"`
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal([]byte(params), &p)
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(nextID.Add(1), 10) + `,"method":"` + method + `","params":` + withMeta(params) + `}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	if p.Name+p.TaskID != "" {
		req.Header.Set("Mcp-Name", p.Name+p.TaskID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	raw := string(b)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = ""
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok && strings.Contains(d, `"id"`) {
				raw = strings.TrimSpace(d)
			}
		}
	}
	r := reply{status: resp.StatusCode, raw: raw}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return r, fmt.Errorf("%s: answer is not JSON-RPC: HTTP %d %q", method, resp.StatusCode, b)
	}
	return r, nil
}

// must is call that fails the test on a transport error or a JSON-RPC
// error.
func must(t *testing.T, url, method, params string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := call(ctx, url, method, params)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != nil || r.Result == nil {
		t.Fatalf("%s %s: %s", method, params, r)
	}
	return r.Result
}

// startTask calls a tool that becomes a task at once (--task-inline-ms 0)
// and returns the task id.
func startTask(t *testing.T, url, tool, args string) string {
	t.Helper()
	res := must(t, url, "tools/call", `{"name":"`+tool+`","arguments":`+args+`}`)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("%s did not become a task: %v", tool, res)
	}
	return id
}

// getTask is tasks/get.
func getTask(t *testing.T, url, id string) map[string]any {
	t.Helper()
	return must(t, url, "tasks/get", `{"taskId":"`+id+`"}`)
}

// waitStatus polls tasks/get on url until the task has status (within
// limit) and returns it with the time it took.
func waitStatus(t *testing.T, url, id, status string, limit time.Duration) (map[string]any, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		got := getTask(t, url, id)
		if got["status"] == status {
			return got, time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("task %s is %v after %s, want %s: %v", id, got["status"], limit, status, got)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// listen opens subscriptions/listen for the task ids on url and returns
// the notifications/tasks params it receives.
func listen(t *testing.T, url string, ids ...string) <-chan map[string]any {
	t.Helper()
	idsJSON, _ := json.Marshal(ids)
	return listenFor(t, url, `{"taskIds":`+string(idsJSON)+`}`, "notifications/tasks")
}

// listenFor opens subscriptions/listen with filter (its notifications
// param) and returns the params of the notifications of method it
// receives.
func listenFor(t *testing.T, url, filter, method string) <-chan map[string]any {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(nextID.Add(1), 10) + `,"method":"subscriptions/listen","params":` +
		withMeta(`{"notifications":`+filter+`}`) + `}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("subscriptions/listen: %s %s", resp.Status, b)
	}
	out := make(chan map[string]any, 64)
	acked := make(chan struct{})
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var n struct {
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
			}
			if json.Unmarshal([]byte(strings.TrimSpace(d)), &n) != nil {
				continue
			}
			switch n.Method {
			case "notifications/subscriptions/acknowledged":
				close(acked)
			case method:
				out <- n.Params
			}
		}
	}()
	select {
	case <-acked:
	case <-time.After(10 * time.Second):
		t.Fatal("subscriptions/listen was not acknowledged")
	}
	return out
}
