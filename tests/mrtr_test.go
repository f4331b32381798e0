package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// End-to-end tests of the 2026-07-28 features over stdio, with the
// conformance fixture guests: multi round-trip requests through the real
// host, request states shared by replicas through --state-key-file, and
// subscriptions/listen with guest-triggered list changes.

var fixture built[string]

// conformanceFixture builds the guests of tests/conformance/fixture once
// per test binary and returns the directory holding them.
func conformanceFixture(t *testing.T) string {
	t.Helper()
	return fixture.get(t, func() (string, error) {
		dir := filepath.Join(workDir, "conformance-fixture")
		_, err := guestbuild.BuildAll(context.Background(), "conformance/fixture", dir)
		return dir, err
	})
}

// modernLines is a 2026-07-28 client on a stdio server: no initialize,
// _meta on every request.
type modernLines struct {
	t    *testing.T
	in   io.Writer
	wmu  sync.Mutex
	mu   sync.Mutex
	wait map[string]chan string
	note chan string
}

func newModernLines(t *testing.T, s *served) *modernLines {
	c := &modernLines{t: t, in: s.Stdin, wait: map[string]chan string{}, note: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(s.Stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			if m.Method != "" {
				c.note <- line
				continue
			}
			c.mu.Lock()
			ch := c.wait[string(m.ID)]
			delete(c.wait, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
	}()
	return c
}

func (c *modernLines) send(line string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("writing to wasmcp: %v", err)
	}
}

// call sends a request with the given id, client capabilities and params
// members (without braces), and returns the decoded response.
func (c *modernLines) call(id, method, caps, members string) map[string]any {
	c.t.Helper()
	ch := c.start(id, method, caps, members)
	select {
	case line := <-ch:
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Fatalf("%s: %v", line, err)
		}
		return m
	case <-time.After(60 * time.Second):
		c.t.Fatalf("no answer to %s %s", method, members)
		return nil
	}
}

func (c *modernLines) start(id, method, caps, members string) chan string {
	ch := make(chan string, 1)
	c.mu.Lock()
	c.wait[id] = ch
	c.mu.Unlock()
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	if members != "" {
		params += "," + members
	}
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}}`)
	return ch
}

func (c *modernLines) nextNote(d time.Duration) string {
	c.t.Helper()
	select {
	case n := <-c.note:
		return n
	case <-time.After(d):
		c.t.Fatalf("no notification within %s", d)
		return ""
	}
}

const everyCap = `{"sampling":{},"elicitation":{},"roots":{}}`

func resultOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	return r
}

func writeKey(t *testing.T, name, key string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMRTRAcrossReplicas(t *testing.T) {
	tools := conformanceFixture(t)
	shared := writeKey(t, "shared", strings.Repeat("s", 48))
	other := writeKey(t, "other", strings.Repeat("o", 48))
	args := func(key string) []string {
		return []string{"--tools", tools, "--watch=false", "--state-key-file", key}
	}
	a := newModernLines(t, startServe(t, args(shared)...))
	b := newModernLines(t, startServe(t, args(shared)...))
	c := newModernLines(t, startServe(t, args(other)...))

	const tool = `"name":"test_input_required_result_multi_round","arguments":{}`
	r1 := resultOf(t, a.call("1", "tools/call", everyCap, tool))
	if r1["resultType"] != "input_required" || r1["inputRequests"].(map[string]any)["step1"] == nil {
		t.Fatalf("round 1: %v", r1)
	}
	// Round 2 on another replica with the same key: step2 is asked.
	r2 := resultOf(t, b.call("2", "tools/call", everyCap, tool+`,"requestState":"`+r1["requestState"].(string)+
		`","inputResponses":{"step1":{"action":"accept","content":{"name":"Alice"}}}`))
	step2, _ := r2["inputRequests"].(map[string]any)["step2"].(map[string]any)
	if r2["resultType"] != "input_required" || step2["params"].(map[string]any)["message"] != "Step 2: What is your favorite color?" {
		t.Fatalf("round 2: %v", r2)
	}
	// Round 3 back on the first: step1 comes from the state.
	r3 := resultOf(t, a.call("3", "tools/call", everyCap, tool+`,"requestState":"`+r2["requestState"].(string)+
		`","inputResponses":{"step2":{"action":"accept","content":{"color":"blue"}}}`))
	content := r3["content"].([]any)[0].(map[string]any)
	if r3["resultType"] != "complete" || content["text"] != "Alice likes blue" {
		t.Fatalf("round 3: %v", r3)
	}
	// A replica with another key refuses the state.
	resp := c.call("4", "tools/call", everyCap, tool+`,"requestState":"`+r2["requestState"].(string)+`"`)
	if e, _ := resp["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
		t.Fatalf("foreign state: %v", resp)
	}
}

func TestMRTRCapabilitiesStdio(t *testing.T) {
	s := newModernLines(t, startServe(t, "--tools", conformanceFixture(t), "--watch=false"))
	// Nothing declared: the guest gives up with -32021 and the data.
	resp := s.call("1", "tools/call", `{}`, `"name":"test_missing_capability","arguments":{}`)
	e, _ := resp["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32021) {
		t.Fatalf("missing capability: %v", resp)
	}
	if _, ok := e["data"].(map[string]any)["requiredCapabilities"].(map[string]any)["sampling"]; !ok {
		t.Fatalf("requiredCapabilities: %v", e)
	}
	// Sampling only: the guest falls back from elicitation to sampling.
	r := resultOf(t, s.call("2", "tools/call", `{"sampling":{}}`, `"name":"test_input_required_result_capabilities","arguments":{}`))
	reqs := r["inputRequests"].(map[string]any)
	if len(reqs) != 1 || reqs["model_name"].(map[string]any)["method"] != "sampling/createMessage" {
		t.Fatalf("fallback: %v", r)
	}
	// All three at once, then one retry answers them all.
	m1 := resultOf(t, s.call("3", "tools/call", everyCap, `"name":"test_input_required_result_multiple_inputs","arguments":{}`))
	if n := len(m1["inputRequests"].(map[string]any)); n != 3 {
		t.Fatalf("multiple inputs: %v", m1)
	}
	m2 := resultOf(t, s.call("4", "tools/call", everyCap, `"name":"test_input_required_result_multiple_inputs","arguments":{},`+
		`"requestState":"`+m1["requestState"].(string)+`","inputResponses":{`+
		`"user_name":{"action":"accept","content":{"name":"Ada"}},`+
		`"greeting":{"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m"},`+
		`"client_roots":{"roots":[{"uri":"file:///r"}]}}`))
	if text := m2["content"].([]any)[0].(map[string]any)["text"]; text != "Hi Ada (1 roots)" {
		t.Fatalf("multiple inputs answered: %v", m2)
	}
}

func TestListenStdio(t *testing.T) {
	s := newModernLines(t, startServe(t, "--tools", conformanceFixture(t), "--watch=false"))
	listen := s.start(`"sub"`, "subscriptions/listen", `{}`, `"notifications":{"promptsListChanged":true}`)
	ack := s.nextNote(30 * time.Second)
	if !strings.Contains(ack, `"notifications/subscriptions/acknowledged"`) || !strings.Contains(ack, `"io.modelcontextprotocol/subscriptionId":"sub"`) {
		t.Fatalf("ack: %s", ack)
	}
	// A tools change is not asked for; a prompts change is, tagged.
	resultOf(t, s.call("1", "tools/call", `{}`, `"name":"test_trigger_tool_change","arguments":{}`))
	resultOf(t, s.call("2", "tools/call", `{}`, `"name":"test_trigger_prompt_change","arguments":{}`))
	n := s.nextNote(10 * time.Second)
	if !strings.Contains(n, `"method":"notifications/prompts/list_changed"`) || !strings.Contains(n, `"io.modelcontextprotocol/subscriptionId":"sub"`) {
		t.Fatalf("notification: %s", n)
	}
	// A second listen is still open when the input ends: it gets its
	// graceful end, and the server can exit.
	defer func() {
		late := s.start(`"late"`, "subscriptions/listen", `{}`, `"notifications":{"toolsListChanged":true}`)
		if ack := s.nextNote(30 * time.Second); !strings.Contains(ack, `"late"`) {
			t.Fatalf("second ack: %s", ack)
		}
		s.in.(io.Closer).Close()
		select {
		case line := <-late:
			if !strings.Contains(line, `"resultType":"complete"`) {
				t.Fatalf("end of input: %s", line)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the listen outlived the end of the input")
		}
	}()
	// notifications/cancelled ends the listen without an answer; the
	// server keeps serving.
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}`)
	resultOf(t, s.call("3", "tools/call", `{}`, `"name":"test_simple_text"`))
	select {
	case line := <-listen:
		t.Fatalf("canceled listen answered: %s", line)
	default:
	}
}
