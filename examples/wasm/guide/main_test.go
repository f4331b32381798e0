package main

import (
	"bytes"
	"strings"
	"testing"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// serve runs one tool handler through the SDK with the given stdin lines.
func serve(t *testing.T, register func(s *guest.Server), lines ...string) string {
	t.Helper()
	s := guest.New("guide", "1")
	register(s)
	var out bytes.Buffer
	if err := s.Serve(strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestConfirmPlan(t *testing.T) {
	reg := func(s *guest.Server) { guest.AddTool(s, guest.Tool{Name: "confirm_plan"}, confirmPlan) }
	req := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"confirm_plan","arguments":{"plan":"deploy"}}}`
	for answer, want := range map[string]string{
		`{"action":"accept","content":{"approve":false,"comment":"not today"}}`: `accepted: approve=false comment=\"not today\"`,
		`{"action":"decline"}`: `declined: `,
		`{"action":"cancel"}`:  `cancelled: `,
	} {
		out := serve(t, reg, req, `{"jsonrpc":"2.0","id":1,"result":`+answer+`}`)
		if !strings.Contains(out, `"method":"elicitation/create"`) || !strings.Contains(out, want) {
			t.Errorf("%s: %s", answer, out)
		}
	}
	out := serve(t, reg, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"confirm_plan","arguments":{"plan":" "}}}`)
	if !strings.Contains(out, `"isError":true`) {
		t.Errorf("empty plan: %s", out)
	}
}

func TestWriteToolPrompt(t *testing.T) {
	res, err := writeTool(nil, map[string]string{"language": "Go", "purpose": "count words"})
	if err != nil || !strings.Contains(res.Messages[0].Content.Text, "in go that does the following:\n\ncount words") {
		t.Errorf("%+v %v", res, err)
	}
	if _, err := writeTool(nil, map[string]string{"language": "cobol", "purpose": "x"}); err == nil {
		t.Error("cobol accepted")
	}
}

func TestTopics(t *testing.T) {
	for _, name := range []string{"abi", "sdk", "limits", "policy"} {
		if !strings.HasPrefix(topics[name], "# ") {
			t.Errorf("topic %s missing", name)
		}
	}
}
