package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/tasks"
)

// taskFixture serves tools with each task support, whose guests the test
// steers through channels.
type taskFixture struct {
	srv     *Server
	release chan struct{} // lets "block" answer
	calls   atomic.Int32  // calls of "slowask"
	hook    func(peer contract.Peer)
}

const taskExt = `{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{}}`

func newTaskFixture(t testing.TB, opts Options) *taskFixture {
	t.Helper()
	f := &taskFixture{release: make(chan struct{})}
	obj := json.RawMessage(`{"type":"object"}`)
	tool := func(name, support string) abi.Tool {
		tl := abi.Tool{Name: name, InputSchema: obj}
		if support != "" {
			tl.Execution = &abi.Execution{TaskSupport: support}
		}
		return tl
	}
	desc := &abi.Description{ABIVersion: 1, Tools: []abi.Tool{
		tool("plain", ""), tool("quick", abi.TaskOptional), tool("req", abi.TaskRequired),
		tool("block", abi.TaskOptional), tool("ask", abi.TaskOptional), tool("slowask", abi.TaskOptional),
		tool("rpcerr", abi.TaskOptional), tool("forever", abi.TaskOptional),
	}}
	mod := &fakeModule{name: "tasks", desc: desc}
	mod.call = func(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(params, &p)
		switch p.Name {
		case "block":
			peer.Notify(ctx, abi.MethodProgress, []byte(`{"progress":1}`))
			if f.hook != nil {
				f.hook(peer)
			}
			select {
			case <-f.release:
				return textReply("released"), nil
			case <-ctx.Done():
				return nil, &host.GuestError{Module: "tasks", Kind: host.KindCanceled, Msg: "call canceled", Err: context.Cause(ctx)}
			}
		case "forever":
			<-ctx.Done()
			return nil, &host.GuestError{Module: "tasks", Kind: host.KindCanceled, Msg: "call canceled", Err: context.Cause(ctx)}
		case "rpcerr":
			<-f.release
			return &contract.Reply{Error: &abi.Error{Code: -32603, Message: "crashed"}}, nil
		case "ask", "slowask":
			if p.Name == "slowask" && f.calls.Add(1) == 1 {
				<-f.release
			}
			res, err := peer.Request(contract.WithInputKey(ctx, "confirm"), abi.MethodElicit, []byte(`{"message":"Sure?","requestedSchema":{"type":"object"}}`))
			if errors.Is(err, contract.ErrInputRequired) {
				return &contract.Reply{InputRequests: []contract.InputRequest{{Key: "confirm", Method: abi.MethodElicit, Params: []byte(`{"message":"Sure?"}`)}}}, nil
			}
			if err != nil {
				return nil, err
			}
			return textReply("answer " + string(res)), nil
		}
		return textReply(p.Name + " done"), nil
	}
	if opts.TaskInline == 0 {
		opts.TaskInline = 30 * time.Millisecond
	}
	f.srv = NewServer(opts)
	cat, _ := NewCatalog([]Module{mod}, nil)
	f.srv.SetCatalog(cat)
	return f
}

func decodeBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("response %s: %v", b, err)
	}
	return out
}

func resultOf(t *testing.T, r Response) map[string]any {
	t.Helper()
	m := decodeBody(t, r.Body)
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %s", r.Body)
	}
	return res
}

func modernTask(t *testing.T, f *taskFixture, principal, method, caps, extra string) Response {
	t.Helper()
	return modernSend(t, f.srv, Hint{Principal: principal}, nil, method, caps, extra)
}

// waitStatus polls tasks/get until the task has status.
func waitStatus(t *testing.T, f *taskFixture, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		res := resultOf(t, modernTask(t, f, "", "tasks/get", taskExt, `"taskId":"`+id+`"`))
		if res["status"] == status {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: status %v, want %s", id, res["status"], status)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestToolModeRule(t *testing.T) {
	f := newTaskFixture(t, Options{})
	legacy := initialized(t, f.srv, V20251125)
	old := initialized(t, f.srv, V20250618)
	call := func(name, caps string) Response {
		return modernTask(t, f, "", "tools/call", caps, `"name":"`+name+`"`)
	}
	legacyCall := func(sess *Session, name string, task bool) Response {
		extra := ""
		if task {
			extra = `,"task":{"ttl":60000}`
		}
		return handle(t, f.srv, sess, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+name+`"`+extra+`}}`, nil)
	}
	kind := func(r Response) string {
		m := decodeBody(t, r.Body)
		if e, ok := m["error"].(map[string]any); ok {
			return fmt.Sprint(e["code"])
		}
		res := m["result"].(map[string]any)
		switch {
		case res["resultType"] == "task":
			return "task"
		case res["task"] != nil:
			return "legacy-task"
		}
		return "inline"
	}
	cases := []struct {
		name string
		r    Response
		want string
	}{
		{"modern forbidden with ext", call("plain", taskExt), "inline"},
		{"modern optional without ext", call("quick", `{}`), "inline"},
		{"modern required without ext", call("req", `{}`), "-32021"},
		{"modern optional with ext, fast", call("quick", taskExt), "inline"},
		{"legacy forbidden with task", legacyCall(legacy, "plain", true), "-32601"},
		{"legacy optional without task", legacyCall(legacy, "quick", false), "inline"},
		{"legacy required without task", legacyCall(legacy, "req", false), "-32601"},
		{"legacy optional with task", legacyCall(legacy, "quick", true), "legacy-task"},
		{"legacy required with task", legacyCall(legacy, "req", true), "legacy-task"},
		{"2025-06-18 ignores params.task", legacyCall(old, "quick", true), "inline"},
	}
	for _, c := range cases {
		if got := kind(c.r); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, c.r.Body, c.want)
		}
	}
	// The -32021 names the extension.
	e := decodeBody(t, call("req", `{}`).Body)["error"].(map[string]any)
	if !strings.Contains(fmt.Sprint(e["data"]), ExtTasks) {
		t.Errorf("-32021 data: %v", e["data"])
	}
}

func TestEscalation(t *testing.T) {
	f := newTaskFixture(t, Options{})
	rec := &recorder{}
	resp := modernSend(t, f.srv, Hint{}, rec, "tools/call", taskExt, `"name":"block","_meta":{"progressToken":"p1","`+MetaProtocolVersion+`":"2026-07-28","`+MetaClientCapabilities+`":`+taskExt+`}`)
	res := resultOf(t, resp)
	if res["resultType"] != "task" || res["status"] != "working" || res["ttlMs"] == nil || res["pollIntervalMs"] == nil || res["task"] != nil {
		t.Fatalf("escalated answer: %s", resp.Body)
	}
	id := res["taskId"].(string)
	// The progress sent inside the window went to the request's stream.
	rec.mu.Lock()
	sent := len(rec.msgs)
	rec.mu.Unlock()
	if sent != 1 || !strings.Contains(rec.msgs[0], `"progressToken":"p1"`) {
		t.Fatalf("stream before the hand-off: %v", rec.msgs)
	}
	got := resultOf(t, modernTask(t, f, "", "tasks/get", taskExt, `"taskId":"`+id+`"`))
	if got["status"] != "working" || got["result"] != nil {
		t.Fatalf("tasks/get while working: %v", got)
	}
	close(f.release)
	done := waitStatus(t, f, id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), "released") {
		t.Fatalf("completed task: %v", done)
	}
	if all, _ := f.srv.Tasks().Running(""); all != 0 {
		t.Fatalf("an ended task still counts: %d", all)
	}
	// A fast call of the same tool is answered in place and creates no task.
	res = resultOf(t, modernTask(t, f, "", "tools/call", taskExt, `"name":"block"`))
	if res["resultType"] != "complete" {
		t.Fatalf("fast call: %v", res)
	}
}

// A result arriving at the window's end is delivered exactly once: either
// in place (and no task exists), or to the task.
func TestEscalationResultAtWindow(t *testing.T) {
	f := newTaskFixture(t, Options{TaskInline: time.Microsecond})
	tasksSeen := 0
	for i := 0; i < 300; i++ {
		res := resultOf(t, modernTask(t, f, "", "tools/call", taskExt, `"name":"quick"`))
		switch res["resultType"] {
		case "complete":
			if !strings.Contains(fmt.Sprint(res["content"]), "quick done") {
				t.Fatalf("inline answer: %v", res)
			}
		case "task":
			tasksSeen++
			done := waitStatus(t, f, res["taskId"].(string), "completed")
			if !strings.Contains(fmt.Sprint(done["result"]), "quick done") {
				t.Fatalf("task result: %v", done)
			}
		default:
			t.Fatalf("answer: %v", res)
		}
	}
	t.Logf("%d of 300 calls became tasks", tasksSeen)
	all, _ := f.srv.Tasks().Running("")
	page, _ := f.srv.Tasks().List(context.Background(), "", "", "", 1000)
	if all != 0 || len(page.Tasks) != tasksSeen {
		t.Fatalf("%d tasks answered, %d stored, %d running", tasksSeen, len(page.Tasks), all)
	}
}

// holdingStore lets a test act while the relay holds the guest's messages:
// Create waits for proceed.
type holdingStore struct {
	tasks.Store
	entered, proceed chan struct{}
}

func (h *holdingStore) Create(ctx context.Context, t *tasks.Task) error {
	close(h.entered)
	<-h.proceed
	return h.Store.Create(ctx, t)
}

// A guest that sends a message and dies while the call is handed to its
// task: the request's stream gets neither, the task records the death.
func TestGuestDiesDuringHandOff(t *testing.T) {
	hs := &holdingStore{Store: tasks.NewMemory(), entered: make(chan struct{}), proceed: make(chan struct{})}
	m, err := tasks.NewManager(context.Background(), hs, tasks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background(), time.Second)
	f := newTaskFixture(t, Options{Tasks: m})
	died := make(chan struct{})
	f.hook = func(peer contract.Peer) {
		<-hs.entered
		peer.Notify(context.Background(), abi.MethodProgress, []byte(`{"progress":2}`))
		close(died)
	}
	go func() {
		<-died
		time.Sleep(20 * time.Millisecond) // the guest's outcome reaches the relay
		close(hs.proceed)
	}()
	// block returns through its ctx; make it die instead.
	rec := &recorder{}
	mod := f.srv.Catalog().toolIdx["block"].mod.(*fakeModule)
	inner := mod.call
	mod.call = func(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
		peer.Notify(ctx, abi.MethodProgress, []byte(`{"progress":1}`))
		f.hook(peer)
		return nil, &host.GuestError{Module: "tasks", Kind: host.KindTrap, Msg: "trapped: unreachable"}
	}
	defer func() { mod.call = inner }()
	resp := modernSend(t, f.srv, Hint{}, rec, "tools/call", taskExt, `"name":"block","_meta":{"progressToken":"p","`+MetaProtocolVersion+`":"2026-07-28","`+MetaClientCapabilities+`":`+taskExt+`}`)
	res := resultOf(t, resp)
	if res["resultType"] != "task" {
		t.Fatalf("answer: %s", resp.Body)
	}
	done := waitStatus(t, f, res["taskId"].(string), "completed")
	r := done["result"].(map[string]any)
	if r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "trapped") {
		t.Fatalf("task of a dead guest: %v", done)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.msgs) != 1 || strings.Contains(rec.msgs[0], `"progress":2`) {
		t.Fatalf("the request's stream got %v", rec.msgs)
	}
}

// The relay replays what it held, in order, then forwards.
func TestRelayHoldsAndReplays(t *testing.T) {
	var got []string
	var mu sync.Mutex
	sk := &funcSink{n: func(method string, p []byte) { mu.Lock(); got = append(got, method+string(p)); mu.Unlock() },
		f: func(o outcome) { mu.Lock(); got = append(got, "finish"); mu.Unlock() }}
	rl := &relay{r: &request{era: Modern}}
	rl.Notify(context.Background(), abi.MethodProgress, []byte("1"))
	rl.Notify(context.Background(), abi.MethodLog, []byte("2"))
	rl.finish(outcome{})
	rl.redirect(sk)
	rl.Notify(context.Background(), abi.MethodProgress, []byte("3"))
	want := "[notifications/progress1 notifications/message2 finish notifications/progress3]"
	if fmt.Sprint(got) != want {
		t.Fatalf("delivered %v, want %s", got, want)
	}
}

type funcSink struct {
	n func(string, []byte)
	f func(outcome)
}

func (s *funcSink) notify(_ context.Context, m string, p []byte) { s.n(m, p) }
func (s *funcSink) finish(o outcome)                             { s.f(o) }

func TestModernTaskMethods(t *testing.T) {
	f := newTaskFixture(t, Options{})
	res := resultOf(t, modernTask(t, f, "alice", "tools/call", taskExt, `"name":"slowask"`))
	if res["resultType"] != "task" {
		t.Fatalf("answer: %v", res)
	}
	id := res["taskId"].(string)
	get := func(principal, caps string) Response {
		return modernTask(t, f, principal, "tasks/get", caps, `"taskId":"`+id+`"`)
	}
	// Gates: the extension, the owner, the removed methods.
	for _, c := range []struct {
		r    Response
		code int
	}{
		{get("alice", `{}`), abi.CodeMissingCapability},
		{get("bob", taskExt), CodeInvalidParams},
		{modernTask(t, f, "alice", "tasks/get", taskExt, `"taskId":"task-nope"`), CodeInvalidParams},
		{modernTask(t, f, "alice", "tasks/result", taskExt, `"taskId":"`+id+`"`), CodeMethodNotFound},
		{modernTask(t, f, "alice", "tasks/list", taskExt, ``), CodeMethodNotFound},
		{modernTask(t, f, "alice", "tasks/cancel", `{}`, `"taskId":"`+id+`"`), abi.CodeMissingCapability},
	} {
		if c.r.Code != c.code {
			t.Errorf("got %s, want code %d", c.r.Body, c.code)
		}
	}
	close(f.release)
	deadline := time.Now().Add(5 * time.Second)
	var cur map[string]any
	for {
		cur = resultOf(t, get("alice", taskExt))
		if cur["status"] == "input_required" || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	reqs, _ := cur["inputRequests"].(map[string]any)
	if cur["status"] != "input_required" || reqs["confirm"] == nil || cur["resultType"] != "complete" {
		t.Fatalf("waiting task: %v", cur)
	}
	update := func(responses string) map[string]any {
		return resultOf(t, modernTask(t, f, "alice", "tasks/update", taskExt, `"taskId":"`+id+`","inputResponses":`+responses))
	}
	if ack := update(`{"other":{"action":"accept"}}`); len(ack) != 2 || ack["resultType"] != "complete" {
		t.Fatalf("ack: %v", ack)
	}
	if cur = resultOf(t, get("alice", taskExt)); cur["status"] != "input_required" {
		t.Fatalf("after an unknown key: %v", cur)
	}
	if r := modernTask(t, f, "alice", "tasks/update", taskExt, `"taskId":"`+id+`","inputResponses":{"confirm":12}`); r.Code != CodeInvalidParams {
		t.Fatalf("malformed answer: %s", r.Body)
	}
	update(`{"confirm":{"action":"accept","content":{"ok":true}}}`)
	deadline = time.Now().Add(5 * time.Second)
	for cur["status"] != "completed" && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
		cur = resultOf(t, get("alice", taskExt))
	}
	if !strings.Contains(fmt.Sprint(cur["result"]), "answer") || f.calls.Load() != 2 {
		t.Fatalf("resumed task: %v (calls %d)", cur, f.calls.Load())
	}
	// Cancelling an ended task is the same empty acknowledgement.
	ack := resultOf(t, modernTask(t, f, "alice", "tasks/cancel", taskExt, `"taskId":"`+id+`"`))
	if ack["resultType"] != "complete" || ack["taskId"] != nil {
		t.Fatalf("cancel ack: %v", ack)
	}
}

func TestModernTaskFailedAndCancelled(t *testing.T) {
	f := newTaskFixture(t, Options{})
	res := resultOf(t, modernTask(t, f, "", "tools/call", taskExt, `"name":"rpcerr"`))
	id := res["taskId"].(string)
	blk := resultOf(t, modernTask(t, f, "", "tools/call", taskExt, `"name":"block"`))
	// A listener for both tasks.
	listen := &recorder{}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	msg, _, _ := Decode([]byte(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"_meta":{"` + MetaProtocolVersion + `":"2026-07-28","` + MetaClientCapabilities + `":` + taskExt + `},"notifications":{"taskIds":["` + id + `","` + blk["taskId"].(string) + `"]}}}`))
	go func() {
		if r := f.srv.Handle(ctx, nil, msg, listen, Hint{}); r.Code != 0 {
			t.Errorf("listen: %s", r.Body)
		}
	}()
	waitFor(t, func() bool { listen.mu.Lock(); defer listen.mu.Unlock(); return len(listen.msgs) > 0 })
	if !strings.Contains(listen.msgs[0], `"taskIds":[`) {
		t.Fatalf("acknowledgement: %s", listen.msgs[0])
	}
	resultOf(t, modernTask(t, f, "", "tasks/cancel", taskExt, `"taskId":"`+blk["taskId"].(string)+`"`))
	waitStatus(t, f, blk["taskId"].(string), "cancelled")
	close(f.release)
	failed := waitStatus(t, f, id, "failed")
	e := failed["error"].(map[string]any)
	if e["code"] != float64(-32603) || e["message"] != "crashed" || failed["result"] != nil {
		t.Fatalf("failed task: %v", failed)
	}
	defer func() {
		if t.Failed() {
			listen.mu.Lock()
			t.Logf("listen stream: %v", listen.msgs)
			listen.mu.Unlock()
		}
	}()
	waitFor(t, func() bool {
		listen.mu.Lock()
		defer listen.mu.Unlock()
		n := 0
		for _, m := range listen.msgs {
			if strings.Contains(m, `"notifications/tasks"`) && strings.Contains(m, `subscriptionId":"sub"`) &&
				(strings.Contains(m, `"status":"failed"`) || strings.Contains(m, `"status":"cancelled"`)) {
				n++
			}
		}
		return n == 2
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestLegacyTaskMethods(t *testing.T) {
	f := newTaskFixture(t, Options{})
	sess := initialized(t, f.srv, V20251125)
	init := resultOf(t, handle(t, f.srv, NewSession(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil))
	if caps := init["capabilities"].(map[string]any); caps["tasks"] == nil || caps["extensions"] != nil {
		t.Fatalf("2025-11-25 capabilities: %v", caps)
	}
	status := &recorder{}
	defer f.srv.AddListener(&Listener{Session: sess, Send: func(m []byte) { _ = status.Send(context.Background(), m) }})()
	send := func(id int, method, params string) Response {
		return handle(t, f.srv, sess, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), nil)
	}
	created := resultOf(t, send(2, "tools/call", `{"name":"block","task":{"ttl":60000}}`))
	task := created["task"].(map[string]any)
	id := task["taskId"].(string)
	if task["status"] != "working" || task["ttl"] != float64(60000) || task["pollInterval"] == nil || created["resultType"] != nil {
		t.Fatalf("CreateTaskResult: %v", created)
	}
	if got := resultOf(t, send(3, "tasks/get", `{"taskId":"`+id+`"}`)); got["status"] != "working" || got["taskId"] != id {
		t.Fatalf("tasks/get: %v", got)
	}
	list := resultOf(t, send(4, "tasks/list", `{}`))
	if ts := list["tasks"].([]any); len(ts) != 1 || ts[0].(map[string]any)["taskId"] != id {
		t.Fatalf("tasks/list: %v", list)
	}
	// Another session of the same anonymous principal lists nothing.
	other := initialized(t, f.srv, V20251125)
	if ts := resultOf(t, handle(t, f.srv, other, `{"jsonrpc":"2.0","id":5,"method":"tasks/list","params":{}}`, nil))["tasks"].([]any); len(ts) != 0 {
		t.Fatalf("another session's tasks/list: %v", ts)
	}
	got := make(chan Response)
	go func() { got <- send(6, "tasks/result", `{"taskId":"`+id+`"}`) }()
	select {
	case r := <-got:
		t.Fatalf("tasks/result answered before the task ended: %s", r.Body)
	case <-time.After(20 * time.Millisecond):
	}
	close(f.release)
	res := resultOf(t, <-got)
	meta := res["_meta"].(map[string]any)[MetaRelatedTask].(map[string]any)
	if meta["taskId"] != id || !strings.Contains(fmt.Sprint(res["content"]), "released") {
		t.Fatalf("tasks/result: %v", res)
	}
	if r := send(7, "tasks/cancel", `{"taskId":"`+id+`"}`); r.Code != CodeInvalidParams {
		t.Fatalf("cancel of a completed task: %s", r.Body)
	}
	if r := send(8, "tasks/get", `{"taskId":"nope"}`); r.Code != CodeInvalidParams {
		t.Fatalf("unknown task: %s", r.Body)
	}
	if r := send(9, "tasks/update", `{"taskId":"`+id+`"}`); r.Code != CodeMethodNotFound {
		t.Fatalf("tasks/update in the legacy era: %s", r.Body)
	}
	waitFor(t, func() bool {
		status.mu.Lock()
		defer status.mu.Unlock()
		for _, m := range status.msgs {
			if strings.Contains(m, `"notifications/tasks/status"`) && strings.Contains(m, `"status":"completed"`) {
				return true
			}
		}
		return false
	})
	// The cancelled task's result is an error naming the task.
	blk := resultOf(t, send(10, "tools/call", `{"name":"forever","task":{}}`))["task"].(map[string]any)["taskId"].(string)
	c := resultOf(t, send(11, "tasks/cancel", `{"taskId":"`+blk+`"}`))
	if c["status"] != "cancelled" {
		t.Fatalf("tasks/cancel: %v", c)
	}
	if r := send(12, "tasks/result", `{"taskId":"`+blk+`"}`); r.Code != CodeInvalidParams || !strings.Contains(string(r.Body), blk) {
		t.Fatalf("tasks/result of a cancelled task: %s", r.Body)
	}
}

// A legacy task's request to the client travels on a waiting tasks/result
// stream, tagged with the task, and the task waits in input_required.
func TestLegacyTaskElicitation(t *testing.T) {
	f := newTaskFixture(t, Options{})
	sess := NewSession()
	handle(t, f.srv, sess, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	created := resultOf(t, handle(t, f.srv, sess, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","task":{}}}`, nil))
	id := created["task"].(map[string]any)["taskId"].(string)
	waitFor(t, func() bool {
		r := resultOf(t, handle(t, f.srv, sess, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+id+`"}}`, nil))
		return r["status"] == "input_required"
	})
	st := &recorder{}
	got := make(chan Response)
	go func() {
		got <- handle(t, f.srv, sess, `{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"`+id+`"}}`, st)
	}()
	var req map[string]any
	waitFor(t, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		for _, m := range st.msgs {
			if strings.Contains(m, `"elicitation/create"`) {
				req = decodeBody(t, []byte(m))
				return true
			}
		}
		return false
	})
	if !strings.Contains(fmt.Sprint(req["params"]), id) {
		t.Fatalf("request without the related task: %v", req)
	}
	rid, _ := json.Marshal(req["id"])
	sess.Deliver(&Message{ID: rid, Result: []byte(`{"action":"accept","content":{"ok":true}}`)})
	res := resultOf(t, <-got)
	if !strings.Contains(fmt.Sprint(res["content"]), "accept") {
		t.Fatalf("result: %v", res)
	}
}

func TestTaskCaps(t *testing.T) {
	m, _ := tasks.NewManager(context.Background(), tasks.NewMemory(), tasks.Options{MaxPerOwner: 1})
	defer m.Close(context.Background(), time.Second)
	f := newTaskFixture(t, Options{Tasks: m})
	sess := initialized(t, f.srv, V20251125)
	first := handle(t, f.srv, sess, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","task":{}}}`, nil)
	if first.Code != 0 {
		t.Fatalf("first task: %s", first.Body)
	}
	second := handle(t, f.srv, sess, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","task":{}}}`, nil)
	if second.Code != CodeInternalError || !strings.Contains(string(second.Body), "Too many concurrent tasks") {
		t.Fatalf("second task: %s", second.Body)
	}
	// A modern call past the cap is refused before its guest runs.
	if r := modernTask(t, f, "", "tools/call", taskExt, `"name":"quick"`); r.Code != CodeInternalError {
		t.Fatalf("modern call past the cap: %s", r.Body)
	}
	close(f.release)
}

// TestTaskCancelAudited: a task's guest stopped by tasks/cancel is audited
// as canceled (CallRecord documents it), not as failed.
func TestTaskCancelAudited(t *testing.T) {
	recs := make(chan CallRecord, 4)
	f := newTaskFixture(t, Options{Audit: func(_ context.Context, rec CallRecord) { recs <- rec }})
	blk := resultOf(t, modernTask(t, f, "", "tools/call", taskExt, `"name":"forever"`))
	id := blk["taskId"].(string)
	resultOf(t, modernTask(t, f, "", "tasks/cancel", taskExt, `"taskId":"`+id+`"`))
	waitStatus(t, f, id, "cancelled")
	select {
	case rec := <-recs:
		if rec.Name != "forever" || rec.Outcome != "canceled" {
			t.Fatalf("audit record %+v", rec)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no audit record")
	}
}
