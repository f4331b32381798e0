package guest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestClientCapabilities(t *testing.T) {
	cases := map[string]ClientCapabilities{
		`{}`: {},
		`{"io.modelcontextprotocol/clientCapabilities":{}}`:                                                 {Known: true},
		`{"io.modelcontextprotocol/clientCapabilities":{"sampling":{"tools":{}},"roots":{}}}`:               {Known: true, Sampling: true, SamplingTools: true, Roots: true},
		`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`:                                 {Known: true, Elicitation: true},
		`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}}}`:                         {Known: true, ElicitationURL: true},
		`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"sampling":{}}}`: {Known: true, Elicitation: true, ElicitationURL: true, Sampling: true},
	}
	for meta, want := range cases {
		c := &Context{meta: json.RawMessage(meta)}
		got := c.ClientCapabilities()
		got.Raw = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", meta, got, want)
		}
	}
}

func TestStartAndWaitAll(t *testing.T) {
	s := New("inputs", "1")
	AddTool(s, Tool{Name: "all"}, func(c *Context, _ struct{}) (string, error) {
		e := c.StartElicit("user_name", "Name?", `{"type":"object","properties":{"name":{"type":"string"}}}`)
		sm := c.StartSample("greeting", SampleParams{Messages: []SamplingMessage{{Role: "user", Content: Text("hi")}}, MaxTokens: 5})
		r := c.StartListRoots("")
		if err := c.WaitAll(e, sm, r); err != nil {
			return "", err
		}
		er, _ := e.Elicit()
		sr, _ := sm.Sample()
		roots, _ := r.Roots()
		return fmt.Sprintf("%s %v %s %s %d", e.Key(), er.Content["name"], sr.Content.Text, r.Key(), len(roots)), nil
	})
	var order []string
	msgs := pipeHost(t, s, toolCall("all", `{}`), func(id json.RawMessage, method string, _ json.RawMessage) string {
		order = append(order, string(id))
		switch method {
		case "elicitation/create":
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, id)
		case "sampling/createMessage":
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"yo"},"model":"m"}}`, id)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file:///a"}]}}`, id)
	})
	if got := strings.Join(order, ","); got != `"user_name","greeting",1` {
		t.Fatalf("request ids %s", got)
	}
	if text, isErr := toolText(t, last(t, msgs)); isErr || text != "user_name Ada yo 1 1" {
		t.Fatalf("result %q (isError %v)", text, isErr)
	}
}

func TestMissingCapabilityAnswersJSONRPCError(t *testing.T) {
	s := New("inputs", "1")
	AddTool(s, Tool{Name: "needs"}, func(c *Context, _ struct{}) (string, error) {
		_, err := c.SampleKey("q", SampleParams{MaxTokens: 1})
		if !IsMissingCapability(err) {
			return "", fmt.Errorf("expected a missing capability, got %v", err)
		}
		return "", fmt.Errorf("cannot work without sampling: %w", err)
	})
	AddTool(s, Tool{Name: "bad"}, func(c *Context, _ struct{}) (string, error) {
		return "", ProtocolError(InvalidParams("no such thing"))
	})
	msgs := pipeHost(t, s, toolCall("needs", `{}`), func(id json.RawMessage, _ string, _ json.RawMessage) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32021,"message":"no sampling","data":{"requiredCapabilities":{"sampling":{}}}}}`, id)
	})
	resp := last(t, msgs)
	if errCode(resp) != CodeMissingCapability {
		t.Fatalf("response %v", resp)
	}
	data, _ := json.Marshal(resp["error"].(map[string]any)["data"])
	if string(data) != `{"requiredCapabilities":{"sampling":{}}}` {
		t.Fatalf("data %s", data)
	}
	if resp := last(t, serve(t, s, toolCall("bad", `{}`))); errCode(resp) != CodeInvalidParams {
		t.Fatalf("ProtocolError: %v", resp)
	}
}

func TestBadKeys(t *testing.T) {
	s := New("inputs", "1")
	AddTool(s, Tool{Name: "k"}, func(c *Context, _ struct{}) (string, error) {
		if _, err := c.ElicitKey("12", "m", `{"type":"object"}`); err == nil {
			return "", fmt.Errorf("all-digit key accepted")
		}
		if _, err := c.ListRootsKey(""); err == nil {
			return "", fmt.Errorf("no host answered, yet no error")
		}
		p := c.StartListRoots("roots")
		if _, err := p.Elicit(); err == nil {
			return "", fmt.Errorf("a roots request read as an elicitation")
		}
		return "ok", nil
	})
	msgs := serve(t, s, toolCall("k", `{}`))
	if text, isErr := toolText(t, last(t, msgs)); isErr || text != "ok" {
		t.Fatalf("%q %v", text, isErr)
	}
	// Only the two valid requests went out.
	var sent []string
	for _, m := range msgs[:len(msgs)-1] {
		sent = append(sent, fmt.Sprint(m["id"]))
	}
	if strings.Join(sent, ",") != "1,roots" {
		t.Fatalf("sent %v", sent)
	}
}

func TestListChangedAndState(t *testing.T) {
	s := New("inputs", "1")
	AddTool(s, Tool{Name: "n"}, func(c *Context, _ struct{}) (string, error) {
		c.ToolsListChanged()
		c.PromptsListChanged()
		c.ResourcesListChanged()
		c.ResourceUpdated("test://x")
		if err := c.SetState(map[string]int{"step": 2}); err != nil {
			return "", err
		}
		return "state " + string(c.State()), nil
	})
	msgs := serve(t, s, call(1, "tools/call", `{"name":"n","arguments":{},"_meta":{"wasmcp/state":{"step":1}}}`))
	var methods []string
	for _, m := range msgs[:len(msgs)-1] {
		methods = append(methods, m["method"].(string))
	}
	want := "notifications/tools/list_changed notifications/prompts/list_changed notifications/resources/list_changed notifications/resources/updated wasmcp/state"
	if strings.Join(methods, " ") != want {
		t.Fatalf("methods %v", methods)
	}
	if p, _ := json.Marshal(msgs[4]["params"]); string(p) != `{"state":{"step":2}}` {
		t.Fatalf("state params %s", p)
	}
	if text, _ := toolText(t, last(t, msgs)); text != `state {"step":1}` {
		t.Fatalf("text %q", text)
	}
}
