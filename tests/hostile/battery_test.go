package hostile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// hostileCase is one way a guest misbehaves and what the client must get
// for it.
type hostileCase struct {
	name, tool, args string
	// want is a substring of the tool error (isError text) naming the
	// module and the cause; empty when check decides.
	want string
	// check, when set, judges the reply instead of want.
	check func(t *testing.T, transport string, r reply)
}

// toolError checks for a tool error that names the module and the cause.
func toolError(t *testing.T, r reply, module, want string) {
	t.Helper()
	if r.rpcCode != 0 || !r.isError {
		t.Fatalf("want a tool error naming %q, got %s", want, r)
	}
	if !strings.HasPrefix(r.text, "module "+module+": ") || !strings.Contains(r.text, want) {
		t.Fatalf("tool error %q: want it to start with %q and contain %q", r.text, "module "+module+": ", want)
	}
}

var cases = []hostileCase{
	{name: "infinite loop", tool: "loop", want: "deadline of " + hostileTimeout + " exceeded (limit timeout)"},
	{name: "unbounded recursion", tool: "recurse", want: "trapped: stack overflow"},
	{name: "memory.grow until refused", tool: "grow",
		want: "trapped: wasm error: unreachable; its memory reached the limit of 32MiB (limit memory)"},
	{name: "Go allocates until out of memory", tool: "alloc_oom",
		want: "exited with code 2 before answering (stderr: fatal error: out of memory); its memory reached the limit of 32MiB (limit memory)"},
	{name: "gigabytes to stdout", tool: "stdout_flood", want: "wrote more than 1MiB to stdout and stderr (limit output)"},
	{name: "a line that never ends", tool: "endless_line", want: "wrote a line longer than 256KiB (limit line)"},
	{name: "malformed JSON", tool: "malformed", want: `wrote a line that is not a JSON-RPC message: "{\"content\":["`},
	{name: "wrong id", tool: "wrong_id", want: "answered with id 987654321; the request's id was "},
	{name: "two responses", tool: "two_responses", check: func(t *testing.T, _ string, r reply) {
		// The first answer is the answer; the second is ignored (and
		// logged), never sent to the client.
		if r.rpcCode != 0 || r.isError || r.text != "first answer" {
			t.Fatalf("want the first answer, got %s", r)
		}
	}},
	{name: "never answers, blocks on stdin", tool: "silent", want: "deadline of " + hostileTimeout + " exceeded (limit timeout)"},
	{name: "never answers, sleeps", tool: "sleep_forever", want: "deadline of " + hostileTimeout + " exceeded (limit timeout)"},
	{name: "proc_exit mid-message", tool: "exit_mid", want: "exited with code 7 before answering"},
	{name: "unreachable", tool: "unreachable", want: "trapped: wasm error: unreachable"},
	{name: "reads a closed stdin", tool: "closed_stdin", check: func(t *testing.T, _ string, r reply) {
		// WASI answers EBADF (8); the guest reports it as its tool error.
		if !r.isError || r.text != "fd_read after fd_close(0): errno 8" {
			t.Fatalf("want the guest's report of EBADF, got %s", r)
		}
	}},
	{name: "writes to invalid descriptors", tool: "bad_fds", check: func(t *testing.T, _ string, r reply) {
		if !r.isError || r.text != "fd_write(3)=8 fd_write(99)=8 fd_write(-1)=8 fd_write(2147483647)=8" {
			t.Fatalf("want EBADF (8) for every write, got %s", r)
		}
	}},
	{name: "closes stdout, then answers", tool: "close_stdout", want: "exited without answering"},
	{name: "paths outside its mounts", tool: "escape", check: checkEscape},
	{name: "environment it was not granted", tool: "env", check: func(t *testing.T, _ string, r reply) {
		var got struct {
			Environ []string `json:"environ"`
			Args    []string `json:"args"`
		}
		if r.isError || json.Unmarshal([]byte(r.text), &got) != nil {
			t.Fatalf("want the guest's report, got %s", r)
		}
		want := []string{"FROM_HOST=from-host", "GRANTED=yes"}
		if strings.Join(got.Environ, "\n") != strings.Join(want, "\n") || strings.Join(got.Args, " ") != "hostilego" {
			t.Fatalf("the guest sees environ %q args %q; want exactly %q and [hostilego]", got.Environ, got.Args, want)
		}
	}},
	{name: "floods notifications", tool: "notify_flood", want: "wrote more than 1MiB to stdout and stderr (limit output)"},
	{name: "network outside its grant", tool: "net_escape", args: `{"base":"NET_BASE"}`, check: checkNetEscape},
	{name: "floods requests to the client", tool: "request_flood", check: func(t *testing.T, transport string, r reply) {
		toolError(t, r, "hostile", "has more than 16 requests to the client outstanding")
	}},
}

// checkNetEscape judges the net_escape tool's report: the granted
// destination answers, the policy's secret reaches the server but comes
// back redacted, every way out is refused, and the flood stops at the
// per-call limit.
func checkNetEscape(t *testing.T, _ string, r reply) {
	var got map[string]string
	if r.isError || json.Unmarshal([]byte(r.text), &got) != nil {
		t.Fatalf("want the guest's report, got %s", r)
	}
	want := map[string]string{
		"granted":                    "ok:200 fine",
		"secret echo":                "ok:200 token=[REDACTED]",
		"uppercase and trailing dot": "ok:200 fine",
		// IPv4-mapped IPv6 counts as IPv4: the granted address itself.
		"ipv4-mapped ipv6": "ok:200 fine",
		"crlf in header":   "err:invalid_request",
		"host header":      "err:invalid_request",
		"file scheme":      "err:invalid_request",
	}
	for _, k := range []string{"userinfo", "userinfo at allowed", "decimal ip", "octal ip", "hex ip", "short ip",
		"ipv6 loopback", "redirect out of the list",
		"other port", "method not granted"} {
		want[k] = "err:policy_refused"
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	// 5 requests above reached the server (granted, echo, mapped,
	// uppercase, and the first hop of the redirect); max_requests is 10.
	flood := strings.Split(got["flood"], ",")
	if len(flood) != 40 || strings.Count(got["flood"], "200") != 5 || strings.Count(got["flood"], "policy_refused") != 35 {
		t.Errorf("flood: %s", got["flood"])
	}
	if strings.Contains(r.text, netSecret) {
		t.Errorf("the secret reached the guest: %s", r.text)
	}
}

// checkEscape judges the escape tool's report: only the two granted
// paths work; every way out is refused.
func checkEscape(t *testing.T, _ string, r reply) {
	var got map[string]string
	if r.isError || json.Unmarshal([]byte(r.text), &got) != nil {
		t.Fatalf("want the guest's report, got %s", r)
	}
	allowed := map[string]bool{"read /data/hello.txt": true, "write /scratch/ok.txt": true}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := got[k]
		switch {
		case allowed[k] && !strings.HasPrefix(v, "ok:"):
			t.Errorf("%s: %s; want it to work (granted)", k, v)
		case !allowed[k] && !strings.HasPrefix(v, "err:"):
			t.Errorf("%s: %s; want it refused", k, v)
		}
	}
	if len(got) < 15 {
		t.Errorf("the report has %d attempts, want every attempt the guest makes: %v", len(got), got)
	}
	if ents, _ := os.ReadDir(outsideDir); len(ents) != 1 {
		t.Errorf("the directory outside the mounts changed: %v", ents)
	}
	if _, err := os.Lstat(filepath.Join(toolsDir, "scratch", "esc")); err == nil {
		t.Errorf("the guest created a symbolic link in its read-write mount")
	}
}

// TestBattery runs every hostile case through wasmcp serve over stdio and
// over HTTP, all at once, each beside a call to the well-behaved module;
// then checks the server still serves and what the floods left behind.
func TestBattery(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, transport)
			var c client
			if transport == "stdio" {
				c = newStdioClient(t, srv)
			} else {
				c = &httpClient{url: srv.URL}
			}
			if r := c.call(t, "echo", `{"text":"ready"}`); r.text != "echo: ready" {
				t.Fatalf("the good module does not answer: %s", r)
			}
			t.Run("cases", func(t *testing.T) {
				for _, hc := range cases {
					t.Run(hc.name, func(t *testing.T) {
						t.Parallel()
						var good reply
						var wg sync.WaitGroup
						wg.Add(1)
						go func() {
							defer wg.Done()
							good = c.call(t, "echo", `{"text":`+quote(hc.name)+`,"sleep_ms":200}`)
						}()
						args := strings.ReplaceAll(hc.args, "NET_BASE", netBase)
						if args == "" {
							args = "{}"
						}
						r := c.call(t, hc.tool, args)
						wg.Wait()
						module := "hostile"
						if hc.tool == "alloc_oom" || hc.tool == "sleep_forever" || hc.tool == "escape" || hc.tool == "env" || hc.tool == "net_escape" {
							module = "hostilego"
						}
						if hc.check != nil {
							hc.check(t, transport, r)
						} else {
							toolError(t, r, module, hc.want)
						}
						if good.isError || good.text != "echo: "+hc.name {
							t.Errorf("a call to another module at the same time failed: %s", good)
						}
						if after := c.call(t, "echo", `{"text":"after"}`); after.text != "echo: after" {
							t.Errorf("the host stopped serving after %s: %s", hc.name, after)
						}
					})
				}
				t.Run("instances beyond max_instances and max_queue", func(t *testing.T) {
					t.Parallel()
					checkGate(t, c)
				})
				t.Run("an invalid module that would clear an interrupt flag", func(t *testing.T) {
					t.Parallel()
					// unstoppable.wasm is refused at load, so its tool does
					// not exist; were it loaded, this call would never end.
					r := c.call(t, "clear_interrupt", "{}")
					if r.rpcCode != -32602 || !strings.Contains(r.rpcMsg, "Unknown tool: clear_interrupt") {
						t.Fatalf("want the tool unknown (its module refused), got %s", r)
					}
					if log := srv.Stderr.String(); !strings.Contains(log, "module refused") || !strings.Contains(log, "unstoppable.wasm") {
						t.Errorf("the log does not say unstoppable.wasm was refused")
					}
				})
			})
			if !srv.Alive() {
				t.Fatal("the server exited")
			}
			if r := c.call(t, "echo", `{"text":"still here"}`); r.text != "echo: still here" {
				t.Fatalf("the server stopped serving: %s", r)
			}
			if n := c.logs(); n == 0 {
				t.Errorf("no log notification of the flood reached the client")
			}
			if n := c.extra(); n != 0 {
				t.Errorf("the client got %d responses to calls already answered", n)
			}
			if transport == "stdio" {
				if n := c.elicits(); n < 1 || n > 16 {
					t.Errorf("the client got %d elicitation requests from the request flood; want 1 to 16 (the cap on outstanding requests)", n)
				}
			}
		})
	}
}

// checkGate calls gated's hold three times at once: one runs until its
// 1 s deadline, one waits for it and then runs, one is refused at once.
func checkGate(t *testing.T, c client) {
	replies := make([]reply, 3)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = c.call(t, "hold", "{}")
		}()
	}
	wg.Wait()
	var busy, deadline int
	for _, r := range replies {
		switch {
		case r.isError && r.text == "module gated: busy: 1 instances running and 1 calls queued (limits max_instances=1, max_queue=1)":
			busy++
		case r.isError && r.text == "module gated: deadline of 1s exceeded (limit timeout)":
			deadline++
		default:
			t.Errorf("unexpected reply: %s", r)
		}
	}
	if busy != 1 || deadline != 2 {
		t.Errorf("got %d busy and %d deadline errors; want 1 and 2", busy, deadline)
	}
}
