package host

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// prettyPeer answers elicitations with indented JSON, as a client that
// pretty-prints its messages does.
type prettyPeer struct{ recordingPeer }

func (p *prettyPeer) Request(ctx context.Context, method string, params []byte) ([]byte, error) {
	if _, err := p.recordingPeer.Request(ctx, method, params); err != nil {
		return nil, err
	}
	return []byte("{\r\n  \"action\": \"accept\",\n  \"content\": {\n    \"name\": \"Ada\\nLovelace\"\n  }\n}"), nil
}

// TestPrettyJSONReachesTheGuestOnOneLine: legal JSON with newlines between
// its tokens (a client that indents) must reach the guest as one line, in
// the request and in the answers to the guest's own requests.
func TestPrettyJSONReachesTheGuestOnOneLine(t *testing.T) {
	m := loadProbe(t, newEngine(t, Limits{}), Policy{})
	params := "{\n  \"name\": \"count\",\r\n  \"arguments\": {\n  }\n}"
	reply, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(params), nil)
	if err != nil || reply.Error != nil || !strings.Contains(string(reply.Result), `"1"`) {
		t.Fatalf("pretty params: %v, %+v", err, reply)
	}
	got, err := callTool(t, m, &prettyPeer{}, "ask", "{\n}")
	if err != nil || got != "accept: hello Ada\nLovelace" {
		t.Fatalf("pretty elicitation answer: %q, %v", got, err)
	}
}

func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{"{\n\"a\":\r\n1}", `{"a":1}`},
		{"{\"a\":\"x\\ny\"}", "{\"a\":\"x\\ny\"}"},
	} {
		if got := string(oneLine([]byte(c.in))); got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	in := []byte(`{"a":1}`)
	if out := oneLine(in); &out[0] != &in[0] {
		t.Error("oneLine copied a line without newlines")
	}
}

// TestNeitherMessageQuotesTheLine: a guest line that is JSON-RPC but no
// message is reported with what the guest wrote.
func TestNeitherMessageQuotesTheLine(t *testing.T) {
	c := &call{m: &Module{name: "g"}, cancel: func(error) {}}
	err := c.handleLine([]byte(`{"jsonrpc":"2.0","result":{"x":1}}`))
	if err == nil || !strings.Contains(err.Error(), `{\"jsonrpc\":\"2.0\",\"result\":{\"x\":1}}`) {
		t.Fatalf("got %v", err)
	}
}
