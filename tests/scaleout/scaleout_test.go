package scaleout

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A task created through replica A is read, listened to, updated and
// cancelled through replica B.
func TestTaskAcrossReplicas(t *testing.T) {
	_, rs := cluster(t, 2, "--log-level", "debug")
	a, b := rs[0], rs[1]

	// A guest that waits for input: created on A, answered on B, which
	// runs it again; A reads the result.
	id := startTask(t, a.url(), "confirm_delete", `{"filename":"report.txt"}`)
	notes := listen(t, b.url(), id)
	got, _ := waitStatus(t, b.url(), id, "input_required", 10*time.Second)
	reqs, _ := got["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("input requests read on B: %v", got)
	}
	var key string
	for k := range reqs {
		key = k
	}
	// A "working" status may come first: the listener subscribed while
	// the guest still ran (its first call compiles the module).
	for n := range notes {
		if n["taskId"] != id || (n["status"] != "working" && n["status"] != "input_required") {
			t.Fatalf("B's listener got %v", n)
		}
		if n["status"] == "input_required" {
			break
		}
	}
	must(t, b.url(), "tasks/update", `{"taskId":"`+id+`","inputResponses":{"`+key+`":{"action":"accept","content":{"confirm":true}}}}`)
	done, _ := waitStatus(t, a.url(), id, "completed", 15*time.Second)
	if !strings.Contains(fmt.Sprint(done["result"]), "Deleted report.txt") {
		t.Fatalf("result read on A: %v", done)
	}
	for n := range notes {
		if n["status"] == "completed" {
			break
		}
	}

	// A guest that never ends, on A: cancelled through B, its guest on A
	// stops, B's listener hears of it.
	spin := startTask(t, a.url(), "spin", `{"mib":1}`)
	notes = listen(t, b.url(), spin)
	if got := getTask(t, b.url(), spin); got["status"] != "working" {
		t.Fatalf("running task read on B: %v", got)
	}
	must(t, b.url(), "tasks/cancel", `{"taskId":"`+spin+`"}`)
	if got := getTask(t, a.url(), spin); got["status"] != "cancelled" {
		t.Fatalf("cancelled task read on A: %v", got)
	}
	// As above, the task's first "working" may reach B's listener first.
	timeout := time.After(10 * time.Second)
	for cancelled := false; !cancelled; {
		select {
		case n := <-notes:
			switch n["status"] {
			case "cancelled":
				cancelled = true
			case "working":
			default:
				t.Fatalf("B's listener got %v", n)
			}
		case <-timeout:
			t.Fatal("B's listener heard nothing of the cancellation")
		}
	}
	// The spinning guest on A is gone (A logs its stop latency).
	waitLog(t, a, "task guest stopped", 10*time.Second)
}

// waitLog waits until the replica logged s.
func waitLog(t *testing.T, r *replica, s string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); !strings.Contains(r.stderr.String(), s); {
		if time.Now().After(deadline) {
			t.Fatalf("replica :%d did not log %q:\n%s", r.port, s, r.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill -9 of the replica running a task: another fails it within the
// lease (the bound allows for the polling and a loaded machine).
func TestKilledReplicaTaskFails(t *testing.T) {
	_, rs := cluster(t, 2)
	a, b := rs[0], rs[1]
	id := startTask(t, a.url(), "hold", `{"mib":1}`)
	waiting := startTask(t, b.url(), "hold", `{"mib":1}`)
	a.kill()
	got, took := waitStatus(t, b.url(), id, "failed", lease+time.Second)
	if got["statusMessage"] != "Task interrupted: the server restarted while it was running" {
		t.Fatalf("failed task: %v", got)
	}
	t.Logf("the killed replica's task failed on the other %s after SIGKILL (lease %s)", took.Round(10*time.Millisecond), lease)
	// A replica starting again does not fail the live replica's task.
	startReplica(t, rsURL(t, b), a.port)
	time.Sleep(lease)
	if got := getTask(t, b.url(), waiting); got["status"] != "working" {
		t.Fatalf("a live replica's task after another restarted: %v", got)
	}
}

// rsURL is the --store of a replica.
func rsURL(t *testing.T, r *replica) string {
	for i, a := range r.args {
		if a == "--store" {
			return r.args[i+1]
		}
	}
	t.Fatal("no --store")
	return ""
}

// A Redis restart (append-only file, SIGKILL) loses no finished result;
// the replicas reconnect by themselves.
func TestRedisRestartKeepsResults(t *testing.T) {
	srv, rs := cluster(t, 2)
	a, b := rs[0], rs[1]
	id := startTask(t, a.url(), "slow_compute", `{"seconds":0,"label":"kept"}`)
	waitStatus(t, a.url(), id, "completed", 10*time.Second)
	srv.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := call(ctx, b.url(), "tasks/get", `{"taskId":"`+id+`"}`)
	if err != nil || r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "unavailable") {
		t.Fatalf("tasks/get while Redis is down: %v %v", r, err)
	}
	// Calls that need no shared state keep working.
	if res := must(t, b.url(), "tools/call", `{"name":"greet","arguments":{"name":"x"}}`); res["resultType"] != "complete" {
		t.Fatalf("greet while Redis is down: %v", res)
	}
	srv.Restart()
	got := getTask(t, b.url(), id)
	if got["status"] != "completed" || !strings.Contains(fmt.Sprint(got["result"]), `Computed "kept"`) {
		t.Fatalf("after the Redis restart: %v", got)
	}
	// New tasks work again on both replicas.
	id2 := startTask(t, b.url(), "slow_compute", `{"seconds":0}`)
	waitStatus(t, a.url(), id2, "completed", 10*time.Second)
}

// Load through the proxy while Redis goes away for a while: inline calls
// all succeed; task calls either succeed or fail with the documented
// error (-32603, "the shared task store (Redis) is unavailable"); once
// Redis is back every kind of call succeeds.
func TestRedisOutageUnderLoad(t *testing.T) {
	srv, rs := cluster(t, 2)
	proxy := startProxy(t, rs[0].port, rs[1].port)
	var inlineOK, taskOK, taskUnavailable atomic.Int64
	var mu sync.Mutex
	var bad []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				var r reply
				var err error
				task := (w+i)%2 == 0
				if task {
					r, err = call(ctx, proxy, "tools/call", `{"name":"slow_compute","arguments":{"seconds":0}}`)
				} else {
					r, err = call(ctx, proxy, "tools/call", `{"name":"greet","arguments":{"name":"w"}}`)
				}
				cancel()
				switch {
				case err != nil:
					mu.Lock()
					bad = append(bad, err.Error())
					mu.Unlock()
				case r.Error == nil && !task:
					inlineOK.Add(1)
				case r.Error == nil && task:
					taskOK.Add(1)
				case task && r.Error.Code == -32603 && strings.Contains(r.Error.Message, "the shared task store (Redis) is unavailable"):
					taskUnavailable.Add(1)
				default:
					mu.Lock()
					bad = append(bad, r.String())
					mu.Unlock()
				}
			}
		}(w)
	}
	// Each phase lasts until the load saw it (bounded), not a fixed time:
	// on a loaded machine, under -race, a few calls take seconds.
	until := func(cond func() bool) {
		for deadline := time.Now().Add(time.Minute); !cond() && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	}
	until(func() bool { return inlineOK.Load() > 0 && taskOK.Load() > 0 })
	srv.Kill()
	until(func() bool { return taskUnavailable.Load() > 0 })
	srv.Restart()
	after := taskOK.Load()
	until(func() bool { return taskOK.Load() > after })
	close(stop)
	wg.Wait()
	t.Logf("inline ok %d, task ok %d, task refused while Redis was down %d", inlineOK.Load(), taskOK.Load(), taskUnavailable.Load())
	if len(bad) > 0 {
		t.Fatalf("%d undocumented outcomes, e.g. %s", len(bad), bad[0])
	}
	if taskUnavailable.Load() == 0 || inlineOK.Load() == 0 {
		t.Fatal("the outage was not seen")
	}
	id := startTask(t, proxy, "slow_compute", `{"seconds":0}`)
	waitStatus(t, proxy, id, "completed", 10*time.Second)
}

// legacy is a 2025-11-25 session over HTTP.
func legacyPost(t *testing.T, url, session, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), b.String()
}

const legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// Legacy sessions live in the replica that minted them: through the proxy
// (stickiness on Mcp-Session-Id) a session works on every request; sent
// to another replica, it fails clearly (404 Session not found, which
// tells a 2025-11-25 client to start a new session) rather than wrongly.
// Modern requests need no affinity.
func TestLegacySessionsBehindProxy(t *testing.T) {
	_, rs := cluster(t, 2)
	proxy := startProxy(t, rs[0].port, rs[1].port)
	for s := 0; s < 4; s++ {
		status, sid, body := legacyPost(t, proxy, "", legacyInit)
		if status != 200 || sid == "" {
			t.Fatalf("initialize through the proxy: %d %s", status, body)
		}
		legacyPost(t, proxy, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i := 0; i < 6; i++ {
			status, _, body := legacyPost(t, proxy, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+2))
			if status != 200 || !strings.Contains(body, `"greet"`) {
				t.Fatalf("session %d request %d through the proxy: %d %s", s, i, status, body)
			}
		}
	}
	// Directly: a session of A sent to B.
	status, sid, _ := legacyPost(t, rs[0].url(), "", legacyInit)
	if status != 200 || sid == "" {
		t.Fatal("initialize on A")
	}
	status, _, body := legacyPost(t, rs[1].url(), sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if status != 404 || !strings.Contains(body, "Session not found") || !strings.Contains(body, "-32600") {
		t.Fatalf("A's session on B: %d %s", status, body)
	}
	// Modern requests alternate between the replicas and all succeed.
	for i := 0; i < 6; i++ {
		must(t, proxy, "tools/call", `{"name":"greet","arguments":{"name":"x"}}`)
	}
}

// Multi round-trip requests across replicas with no --state-key-file: the
// replicas share the sealing key through Redis, read once at start, so
// rounds keep working on any replica even while Redis is down.
func TestMRTRAcrossReplicasSharedKey(t *testing.T) {
	srv, rs := cluster(t, 2)
	a, b := rs[0], rs[1]
	const tool = `"name":"test_input_required_result_multi_round","arguments":{}`
	r1 := must(t, a.url(), "tools/call", `{`+tool+`}`)
	if r1["resultType"] != "input_required" {
		t.Fatalf("round 1: %v", r1)
	}
	r2 := must(t, b.url(), "tools/call", `{`+tool+`,"requestState":"`+r1["requestState"].(string)+
		`","inputResponses":{"step1":{"action":"accept","content":{"name":"Alice"}}}}`)
	if r2["resultType"] != "input_required" {
		t.Fatalf("round 2 on the other replica: %v", r2)
	}
	srv.Kill()
	r3 := must(t, a.url(), "tools/call", `{`+tool+`,"requestState":"`+r2["requestState"].(string)+
		`","inputResponses":{"step2":{"action":"accept","content":{"color":"blue"}}}}`)
	if r3["resultType"] != "complete" || !strings.Contains(fmt.Sprint(r3["content"]), "Alice likes blue") {
		t.Fatalf("round 3 with Redis down: %v", r3)
	}
}

// A list change a guest announces on one replica reaches the listeners of
// every replica.
func TestAnnouncementsReachOtherReplicas(t *testing.T) {
	_, rs := cluster(t, 2)
	notes := listenFor(t, rs[1].url(), `{"toolsListChanged":true}`, "notifications/tools/list_changed")
	must(t, rs[0].url(), "tools/call", `{"name":"test_trigger_tool_change","arguments":{}}`)
	select {
	case <-notes:
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica's listener heard nothing")
	}
}

// A task acknowledged just before Redis stopped, whose guest finishes
// during the outage, is not lost: its outcome is kept on its replica and
// written when Redis is back, and the other replica reads the result (it
// stayed working on every replica until its TTL before).
func TestTaskFinishedDuringRedisOutage(t *testing.T) {
	srv, rs := cluster(t, 2)
	a, b := rs[0], rs[1]
	id := startTask(t, a.url(), "slow_compute", `{"seconds":2,"label":"outage"}`)
	srv.Kill()
	waitLog(t, a, "recording a task's", 20*time.Second) // the guest ended during the outage
	srv.Restart()
	got, _ := waitStatus(t, b.url(), id, "completed", 20*time.Second)
	if !strings.Contains(fmt.Sprint(got["result"]), `Computed "outage"`) {
		t.Fatalf("after the outage: %v", got)
	}
}
