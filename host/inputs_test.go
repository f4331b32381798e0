package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

var (
	inputsOnce sync.Once
	inputsMod  *Module
	inputsErr  error
)

// loadInputs builds and loads, once per test binary, the raw-ABI guest of
// testdata/guests/inputs (its engine lives as long as the process).
func loadInputs(t testing.TB) *Module {
	t.Helper()
	inputsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "host-inputs")
		if err != nil {
			inputsErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "inputs.wasm")
		if inputsErr = guestbuild.Build(context.Background(), "testdata/guests/inputs", out); inputsErr != nil {
			return
		}
		wasm, err := os.ReadFile(out)
		if err != nil {
			inputsErr = err
			return
		}
		// The default compilation cache: wazero compiles a Go guest slowly
		// under the race detector, and the cache makes that once per machine.
		e, err := NewEngine(Config{Limits: Limits{Timeout: 20 * time.Second}})
		if err != nil {
			inputsErr = err
			return
		}
		inputsMod, inputsErr = e.Load(context.Background(), "inputs", wasm, Policy{})
	})
	if inputsErr != nil {
		t.Fatal(inputsErr)
	}
	return inputsMod
}

// inputsPeer answers the keys in answers, fails those in errs, delays
// those in slow, and leaves every other request to the client's retry.
type inputsPeer struct {
	answers map[string]string
	errs    map[string]*abi.Error
	slow    map[string]time.Duration

	mu    sync.Mutex
	notes []string
	keys  []string
}

func (p *inputsPeer) Notify(_ context.Context, method string, params []byte) {
	p.mu.Lock()
	p.notes = append(p.notes, method+" "+string(params))
	p.mu.Unlock()
}

func (p *inputsPeer) Request(ctx context.Context, method string, params []byte) ([]byte, error) {
	key := contract.InputKey(ctx)
	p.mu.Lock()
	p.keys = append(p.keys, key)
	p.mu.Unlock()
	if d := p.slow[key]; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if a, ok := p.answers[key]; ok {
		return []byte(a), nil
	}
	if e, ok := p.errs[key]; ok {
		return nil, e
	}
	return nil, contract.ErrInputRequired
}

func callInputs(t *testing.T, m *Module, tool string, peer contract.Peer) (*contract.Reply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return m.Call(ctx, abi.MethodToolsCall, []byte(`{"name":"`+tool+`","arguments":{}}`), peer)
}

func inputKeys(r *contract.Reply) string {
	var ks []string
	for _, in := range r.InputRequests {
		ks = append(ks, in.Key+":"+in.Method)
	}
	return strings.Join(ks, ",")
}

func TestInputRequired(t *testing.T) {
	m := loadInputs(t)
	cases := []struct {
		tool    string
		peer    *inputsPeer
		inputs  string // expected keys:methods, "" for a normal reply
		result  string // substring of the normal result
		state   string
		wantErr Kind
	}{
		{tool: "ask", peer: &inputsPeer{}, inputs: "user_name:elicitation/create"},
		{tool: "ask", peer: &inputsPeer{answers: map[string]string{"user_name": `{"action":"accept","content":{"name":"Ada"}}`}},
			result: `\"user_name\"={\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}`},
		{tool: "ask3", peer: &inputsPeer{}, inputs: "a:elicitation/create,2:elicitation/create,c:elicitation/create"},
		{tool: "ask3", peer: &inputsPeer{answers: map[string]string{"2": `{"action":"decline"}`}}, inputs: "a:elicitation/create,c:elicitation/create"},
		// A slow answer keeps the call alive until it arrives.
		{tool: "ask3", peer: &inputsPeer{answers: map[string]string{"a": `{"action":"cancel"}`}, slow: map[string]time.Duration{"a": 100 * time.Millisecond}},
			inputs: "2:elicitation/create,c:elicitation/create"},
		{tool: "ask3", peer: &inputsPeer{answers: map[string]string{"a": `{}`, "2": `{}`, "c": `{}`}}, result: `\"c\"={}`},
		{tool: "ask_then_answer", peer: &inputsPeer{}, result: "answered anyway"},
		{tool: "dup", peer: &inputsPeer{}, wantErr: KindProtocol},
		{tool: "state", peer: &inputsPeer{}, inputs: "s:elicitation/create", state: `{"step":2}`},
		{tool: "chain", peer: &inputsPeer{}, inputs: "first:elicitation/create"},
		{tool: "chain", peer: &inputsPeer{answers: map[string]string{"first": `{"action":"decline"}`}}, inputs: "second:elicitation/create"},
		{tool: "ask", peer: &inputsPeer{errs: map[string]*abi.Error{"user_name": {Code: abi.CodeMissingCapability, Message: "no elicitation",
			Data: []byte(`{"requiredCapabilities":{"elicitation":{}}}`)}}},
			result: `{\"code\":-32021,\"message\":\"no elicitation\",\"data\":{\"requiredCapabilities\":{\"elicitation\":{}}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			reply, err := callInputs(t, m, tc.tool, tc.peer)
			if tc.wantErr != "" {
				if !IsKind(err, tc.wantErr) {
					t.Fatalf("err = %v, reply %+v; want a %s error", err, reply, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := inputKeys(reply); got != tc.inputs {
				t.Fatalf("input requests %q, want %q (result %s)", got, tc.inputs, reply.Result)
			}
			if tc.inputs != "" {
				if reply.Result != nil || reply.Error != nil {
					t.Fatalf("input-required reply also has a result or error: %+v", reply)
				}
				if !strings.Contains(string(reply.InputRequests[0].Params), `"requestedSchema"`) {
					t.Fatalf("params not kept: %s", reply.InputRequests[0].Params)
				}
			}
			if !strings.Contains(string(reply.Result), tc.result) {
				t.Fatalf("result %s does not contain %s", reply.Result, tc.result)
			}
			if string(reply.State) != tc.state {
				t.Fatalf("state %s, want %s", reply.State, tc.state)
			}
		})
	}
}

func TestGuestListNotifications(t *testing.T) {
	m := loadInputs(t)
	p := &inputsPeer{}
	reply, err := callInputs(t, m, "notify", p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(reply.Result), "notified") {
		t.Fatalf("result %s", reply.Result)
	}
	want := []string{
		"notifications/tools/list_changed ",
		"notifications/prompts/list_changed {}",
		"notifications/resources/list_changed ",
		`notifications/resources/updated {"uri":"test://x"}`,
	}
	if strings.Join(p.notes, "\n") != strings.Join(want, "\n") {
		t.Fatalf("notifications:\n%s\nwant:\n%s", strings.Join(p.notes, "\n"), strings.Join(want, "\n"))
	}
}

func TestInputKey(t *testing.T) {
	for in, want := range map[string]string{`"user_name"`: "user_name", `7`: "7", `-3`: "-3", `"a\"b"`: `a"b`} {
		if got, ok := inputKey([]byte(in)); !ok || got != want {
			t.Errorf("inputKey(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{`1.5`, `{}`, `null`, `-`, ``, `true`} {
		if _, ok := inputKey([]byte(bad)); ok {
			t.Errorf("inputKey(%s) accepted", bad)
		}
	}
	if contract.InputKey(context.Background()) != "" {
		t.Error("InputKey of a plain context is not empty")
	}
}
