package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// End-to-end tests of MCP tasks: the legacy (2025-11-25) task methods over
// stdio and Streamable HTTP, cancellation of a busy guest, and a restart
// with a persistent task store. The tools are the conformance fixture's
// task tools and tests/testdata/taskguest.

var taskGuests built[string]

// taskTools builds the fixture's task tools and tests/testdata/taskguest
// into a directory of their own.
func taskTools(t *testing.T) string {
	t.Helper()
	return taskGuests.get(t, func() (string, error) {
		dir := filepath.Join(workDir, "tasktools")
		ctx := context.Background()
		if err := guestbuild.Build(ctx, "conformance/fixture/tasks", filepath.Join(dir, "tasks.wasm")); err != nil {
			return "", err
		}
		return dir, guestbuild.Build(ctx, "testdata/taskguest", filepath.Join(dir, "taskguest.wasm"))
	})
}

// legacyConn is a 2025-11-25 session: requests and their answers, the
// server's requests to the client, and the notifications.
type legacyConn interface {
	// call sends a request and returns the whole JSON-RPC response.
	call(method, params string) map[string]any
	// requests yields the server's requests to the client.
	requests() <-chan map[string]any
	// respond answers a server request.
	respond(id any, result string)
	// notifications yields the notifications the server sent.
	notifications() <-chan map[string]any
}

func resultMap(t *testing.T, resp map[string]any) map[string]any {
	t.Helper()
	res, ok := resp["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %v", resp)
	}
	return res
}

func errorCode(resp map[string]any) float64 {
	e, _ := resp["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// classify routes one message a server wrote.
type router struct {
	mu    sync.Mutex
	calls map[string]chan map[string]any
	reqs  chan map[string]any
	notes chan map[string]any
}

func newRouter() *router {
	return &router{calls: map[string]chan map[string]any{}, reqs: make(chan map[string]any, 64), notes: make(chan map[string]any, 1024)}
}

func (r *router) expect(id string) chan map[string]any {
	ch := make(chan map[string]any, 1)
	r.mu.Lock()
	r.calls[id] = ch
	r.mu.Unlock()
	return ch
}

func (r *router) route(line string) {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) != nil {
		return
	}
	_, hasID := m["id"]
	_, hasMethod := m["method"]
	switch {
	case hasMethod && hasID:
		r.reqs <- m
	case hasMethod:
		select {
		case r.notes <- m:
		default:
		}
	case hasID:
		id, _ := json.Marshal(m["id"])
		r.mu.Lock()
		ch := r.calls[string(id)]
		delete(r.calls, string(id))
		r.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func wait(t *testing.T, ch chan map[string]any, what string) map[string]any {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer to %s", what)
		return nil
	}
}

// stdioLegacy is a legacyConn over a stdio server.
type stdioLegacy struct {
	t    *testing.T
	s    *served
	r    *router
	wmu  sync.Mutex
	next atomic.Int64
}

func newStdioLegacy(t *testing.T, s *served) *stdioLegacy {
	c := &stdioLegacy{t: t, s: s, r: newRouter()}
	go func() {
		sc := bufio.NewScanner(s.Stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			c.r.route(sc.Text())
		}
	}()
	resultMap(t, c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"e2e","version":"1"}}`))
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *stdioLegacy) send(line string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.s.Stdin, line+"\n"); err != nil {
		c.t.Errorf("writing to wasmcp: %v", err)
	}
}

func (c *stdioLegacy) call(method, params string) map[string]any {
	id := fmt.Sprint(c.next.Add(1))
	ch := c.r.expect(id)
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	return wait(c.t, ch, method)
}

func (c *stdioLegacy) requests() <-chan map[string]any      { return c.r.reqs }
func (c *stdioLegacy) notifications() <-chan map[string]any { return c.r.notes }
func (c *stdioLegacy) respond(id any, result string) {
	b, _ := json.Marshal(id)
	c.send(`{"jsonrpc":"2.0","id":` + string(b) + `,"result":` + result + `}`)
}

// httpLegacy is a legacyConn over a Streamable HTTP session: answers come as
// JSON or on the POST's SSE stream, with the server's requests; the GET
// stream carries the rest.
type httpLegacy struct {
	t    *testing.T
	url  string
	hc   *http.Client // http.DefaultClient, or an HTTP/3 client
	sid  string
	r    *router
	next atomic.Int64
}

func newHTTPLegacy(t *testing.T, url string) *httpLegacy {
	return newHTTPLegacyWith(t, url, http.DefaultClient)
}

// newHTTPLegacyWith is newHTTPLegacy over the client hc.
func newHTTPLegacyWith(t *testing.T, url string, hc *http.Client) *httpLegacy {
	c := &httpLegacy{t: t, url: url, hc: hc, r: newRouter()}
	resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	c.read(resp)
	if c.sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	c.read(c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	get, err := c.hc.Do(req)
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, get)
	}
	go c.read(get)
	return c
}

func (c *httpLegacy) post(body string) *http.Response {
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// read routes what a response carries.
func (c *httpLegacy) read(resp *http.Response) {
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		readSSE(resp.Body, func(data string) bool { c.r.route(data); return true })
		return
	}
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		c.r.route(string(b))
	}
}

func (c *httpLegacy) call(method, params string) map[string]any {
	id := fmt.Sprint(c.next.Add(1))
	ch := c.r.expect(id)
	go c.read(c.post(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`))
	return wait(c.t, ch, method)
}

func (c *httpLegacy) requests() <-chan map[string]any      { return c.r.reqs }
func (c *httpLegacy) notifications() <-chan map[string]any { return c.r.notes }
func (c *httpLegacy) respond(id any, result string) {
	b, _ := json.Marshal(id)
	resp := c.post(`{"jsonrpc":"2.0","id":` + string(b) + `,"result":` + result + `}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Errorf("posting a response: %s", resp.Status)
	}
}

func TestTasksLegacyStdio(t *testing.T) {
	s := startServe(t, "--tools", taskTools(t), "--cache-dir", compileCache, "--watch=false", "--data-dir", "-")
	legacyTaskScenario(t, newStdioLegacy(t, s))
}

func TestTasksLegacyHTTP(t *testing.T) {
	s := startServe(t, "--tools", taskTools(t), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false", "--data-dir", "-")
	c := newHTTPLegacy(t, s.URL)
	legacyTaskScenario(t, c)
	// A graceful shutdown with a task running: it ends promptly, the
	// task's guest stopped.
	resultMap(t, c.call("tools/call", `{"name":"slow_compute","arguments":{"seconds":60},"task":{}}`))
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- waitExit(s) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wasmcp exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("wasmcp did not exit within 20 s of SIGTERM")
	}
}

// legacyTaskScenario drives the 2025-11-25 task methods.
func legacyTaskScenario(t *testing.T, c legacyConn) {
	tools := resultMap(t, c.call("tools/list", `{}`))["tools"].([]any)
	support := map[string]any{}
	for _, x := range tools {
		tl := x.(map[string]any)
		if ex, ok := tl["execution"].(map[string]any); ok {
			support[tl["name"].(string)] = ex["taskSupport"]
		}
	}
	if support["slow_compute"] != "optional" || support["failing_job"] != "required" || support["greet"] != nil {
		t.Fatalf("taskSupport in tools/list: %v", support)
	}

	// A task: created at once, working, then its result with the
	// related-task _meta.
	created := resultMap(t, c.call("tools/call", `{"name":"slow_compute","arguments":{"seconds":0.3,"label":"e2e"},"task":{"ttl":120000}}`))
	task := created["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" || task["status"] != "working" || task["ttl"] != float64(120000) || task["pollInterval"] == nil {
		t.Fatalf("CreateTaskResult: %v", created)
	}
	if got := resultMap(t, c.call("tasks/get", `{"taskId":"`+id+`"}`)); got["taskId"] != id || got["createdAt"] == nil {
		t.Fatalf("tasks/get: %v", got)
	}
	res := resultMap(t, c.call("tasks/result", `{"taskId":"`+id+`"}`))
	meta, _ := res["_meta"].(map[string]any)
	rel, _ := meta["io.modelcontextprotocol/related-task"].(map[string]any)
	if rel["taskId"] != id || !strings.Contains(fmt.Sprint(res["content"]), `Computed "e2e"`) {
		t.Fatalf("tasks/result: %v", res)
	}
	if got := resultMap(t, c.call("tasks/get", `{"taskId":"`+id+`"}`)); got["status"] != "completed" {
		t.Fatalf("tasks/get after the result: %v", got)
	}
	// The status notification of the end.
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		select {
		case n := <-c.notifications():
			p, _ := n["params"].(map[string]any)
			seen = n["method"] == "notifications/tasks/status" && p["taskId"] == id && p["status"] == "completed"
		case <-deadline:
			t.Fatal("no notifications/tasks/status for the completed task")
		}
	}

	// A tool error completes the task; a JSON-RPC error fails it, and
	// tasks/result answers that error.
	fj := resultMap(t, c.call("tools/call", `{"name":"failing_job","arguments":{},"task":{}}`))["task"].(map[string]any)["taskId"].(string)
	if res := resultMap(t, c.call("tasks/result", `{"taskId":"`+fj+`"}`)); res["isError"] != true {
		t.Fatalf("failing_job result: %v", res)
	}
	pj := resultMap(t, c.call("tools/call", `{"name":"protocol_error_job","arguments":{},"task":{}}`))["task"].(map[string]any)["taskId"].(string)
	if r := c.call("tasks/result", `{"taskId":"`+pj+`"}`); errorCode(r) != -32603 {
		t.Fatalf("protocol_error_job result: %v", r)
	}
	if got := resultMap(t, c.call("tasks/get", `{"taskId":"`+pj+`"}`)); got["status"] != "failed" {
		t.Fatalf("protocol_error_job task: %v", got)
	}

	// Input inside a task: the request reaches the client on the
	// tasks/result stream, tagged with the task, while the task is
	// input_required.
	cd := resultMap(t, c.call("tools/call", `{"name":"confirm_delete","arguments":{"filename":"a.txt"},"task":{}}`))["task"].(map[string]any)["taskId"].(string)
	done := make(chan map[string]any, 1)
	go func() { done <- c.call("tasks/result", `{"taskId":"`+cd+`"}`) }()
	var req map[string]any
	select {
	case req = <-c.requests():
	case <-time.After(30 * time.Second):
		t.Fatal("no elicitation/create from the task")
	}
	p, _ := req["params"].(map[string]any)
	pm, _ := p["_meta"].(map[string]any)
	if req["method"] != "elicitation/create" || fmt.Sprint(pm["io.modelcontextprotocol/related-task"]) != fmt.Sprint(map[string]any{"taskId": cd}) {
		t.Fatalf("request from the task: %v", req)
	}
	if got := resultMap(t, c.call("tasks/get", `{"taskId":"`+cd+`"}`)); got["status"] != "input_required" {
		t.Fatalf("task waiting for the answer: %v", got)
	}
	c.respond(req["id"], `{"action":"accept","content":{"confirm":true}}`)
	if res := resultMap(t, wait(t, done, "tasks/result")); !strings.Contains(fmt.Sprint(res["content"]), "Deleted a.txt") {
		t.Fatalf("confirm_delete result: %v", res)
	}

	// tasks/list pages over this session's tasks.
	var listed []string
	cursor := ""
	for i := 0; i < 10; i++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		l := resultMap(t, c.call("tasks/list", params))
		for _, x := range l["tasks"].([]any) {
			listed = append(listed, x.(map[string]any)["taskId"].(string))
		}
		next, _ := l["nextCursor"].(string)
		if cursor = next; cursor == "" {
			break
		}
	}
	if fmt.Sprint(listed) != fmt.Sprint([]string{id, fj, pj, cd}) {
		t.Fatalf("tasks/list: %v, want %v", listed, []string{id, fj, pj, cd})
	}

	// Cancel: the task ends cancelled at once; a second cancel and an
	// unknown task are -32602.
	long := resultMap(t, c.call("tools/call", `{"name":"slow_compute","arguments":{"seconds":60},"task":{}}`))["task"].(map[string]any)["taskId"].(string)
	if got := resultMap(t, c.call("tasks/cancel", `{"taskId":"`+long+`"}`)); got["status"] != "cancelled" {
		t.Fatalf("tasks/cancel: %v", got)
	}
	if r := c.call("tasks/cancel", `{"taskId":"`+long+`"}`); errorCode(r) != -32602 {
		t.Fatalf("second cancel: %v", r)
	}
	if r := c.call("tasks/get", `{"taskId":"task-0000"}`); errorCode(r) != -32602 {
		t.Fatalf("unknown task: %v", r)
	}
	// A required tool without params.task, and a forbidden one with it.
	if r := c.call("tools/call", `{"name":"failing_job","arguments":{}}`); errorCode(r) != -32601 {
		t.Fatalf("required tool called inline: %v", r)
	}
	if r := c.call("tools/call", `{"name":"greet","arguments":{"name":"x"},"task":{}}`); errorCode(r) != -32601 {
		t.Fatalf("forbidden tool called as a task: %v", r)
	}
}

var stopLatency = regexp.MustCompile(`msg="task guest stopped" task=(\S+) stop_latency=(\S+)`)

// A guest spinning in a loop is gone within 100 ms of tasks/cancel. The
// server measures the latency from the cancel to the end of the guest's
// instance and logs it (debug level, stop_latency); the test reads it
// there. TestTaskCancelReleasesMemory checks the memory side in process.
func TestTaskCancelStopsBusyGuest(t *testing.T) {
	s := startServe(t, "--tools", taskTools(t), "--cache-dir", compileCache, "--watch=false", "--data-dir", "-", "--log-level", "debug")
	c := newStdioLegacy(t, s)
	progressed := make(chan struct{}, 1)
	go func() {
		for n := range c.notifications() {
			if n["method"] == "notifications/progress" {
				select {
				case progressed <- struct{}{}:
				default:
				}
			}
		}
	}()
	created := resultMap(t, c.call("tools/call", `{"name":"spin","arguments":{"mib":16},"task":{},"_meta":{"progressToken":"spin"}}`))
	id := created["task"].(map[string]any)["taskId"].(string)
	select {
	case <-progressed:
	case <-time.After(90 * time.Second): // its first call compiles the module; slack for a loaded machine
		t.Fatal("the guest never reported its allocation")
	}
	time.Sleep(20 * time.Millisecond) // well into its loop
	start := time.Now()
	if got := resultMap(t, c.call("tasks/cancel", `{"taskId":"`+id+`"}`)); got["status"] != "cancelled" {
		t.Fatalf("tasks/cancel: %v", got)
	}
	var latency time.Duration
	waitFor(t, 10*time.Second, "the guest to stop", func() bool {
		for _, m := range stopLatency.FindAllStringSubmatch(s.Stderr.String(), -1) {
			if m[1] == id {
				d, err := time.ParseDuration(m[2])
				if err != nil {
					t.Fatalf("stop_latency %q: %v", m[2], err)
				}
				latency = d
				return true
			}
		}
		return false
	})
	t.Logf("the guest stopped %s after the cancel took effect (seen %s after tasks/cancel was sent)", latency, time.Since(start))
	if latency > 100*time.Millisecond {
		t.Errorf("the busy guest took %s to stop, want ≤ 100ms", latency)
	}
	// The server stays usable and the task stays cancelled.
	if got := resultMap(t, c.call("tasks/get", `{"taskId":"`+id+`"}`)); got["status"] != "cancelled" {
		t.Fatalf("tasks/get after the cancel: %v", got)
	}
}

// rssOf reads a process's resident set size.
func rssOf(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		t.Fatalf("statm: %v", err)
	}
	return resident * int64(syscall.Getpagesize())
}

// A completed task's result survives a restart; a task running when the
// process died is failed with a status message.
func TestTaskRestart(t *testing.T) {
	dataDir := t.TempDir()
	args := []string{"--tools", taskTools(t), "--cache-dir", compileCache, "--watch=false", "--data-dir", dataDir}
	s := startServe(t, args...)
	c := newStdioLegacy(t, s)
	done := resultMap(t, c.call("tools/call", `{"name":"slow_compute","arguments":{"seconds":0,"label":"kept"},"task":{}}`))["task"].(map[string]any)["taskId"].(string)
	resultMap(t, c.call("tasks/result", `{"taskId":"`+done+`"}`))
	running := resultMap(t, c.call("tools/call", `{"name":"slow_compute","arguments":{"seconds":60},"task":{}}`))["task"].(map[string]any)["taskId"].(string)
	// The process dies.
	if err := s.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.Done()

	s2 := startServe(t, args...)
	c2 := newStdioLegacy(t, s2)
	res := resultMap(t, c2.call("tasks/result", `{"taskId":"`+done+`"}`))
	if !strings.Contains(fmt.Sprint(res["content"]), `Computed "kept"`) {
		t.Fatalf("completed task's result after the restart: %v", res)
	}
	got := resultMap(t, c2.call("tasks/get", `{"taskId":"`+running+`"}`))
	if got["status"] != "failed" || !strings.Contains(fmt.Sprint(got["statusMessage"]), "restarted") {
		t.Fatalf("running task after the restart: %v", got)
	}
	if r := c2.call("tasks/result", `{"taskId":"`+running+`"}`); errorCode(r) != -32603 {
		t.Fatalf("result of the interrupted task: %v", r)
	}
}
