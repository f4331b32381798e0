package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// TestDeclaredTextsChecked: a tool, resource, template or prompt whose
// texts hold control characters, bytes that are not UTF-8 or megabytes is
// refused at load; a clean neighbour (with a multi-line description) stays.
func TestDeclaredTextsChecked(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	big := strings.Repeat("x", maxDescriptionLen+1)
	desc := &abi.Description{ABIVersion: 1, Name: "m",
		Tools: []abi.Tool{
			{Name: "ok", Description: "line one\n\tline two", InputSchema: obj},
			{Name: "nul\x00", InputSchema: obj},
			{Name: "osc", Description: "\x1b]0;owned\x07", InputSchema: obj},
			{Name: "big", Description: big, InputSchema: obj},
		},
		Resources: []abi.Resource{
			{URI: "m://ok", Name: "ok"},
			{URI: "m://cr\r\nevent: x", Name: "cr"},
			{URI: "m://utf8", Name: "bad\xff"},
			{URI: "m://c1", Name: "c1", Title: "\u009b31m"},
		},
		ResourceTemplates: []abi.ResourceTemplate{
			{URITemplate: "m://t/{id}", Name: "ok"},
			{URITemplate: "m://u/{id}", Name: "t", Description: "esc \x1b[2J"},
		},
		Prompts: []abi.Prompt{
			{Name: "ok", Description: "fine"},
			{Name: "p\n", Description: "newline in a name"},
			{Name: "args", Arguments: []abi.PromptArgument{{Name: "a", Description: "\x00"}}},
			{Name: "long" + strings.Repeat("n", maxLabelLen)},
		},
	}
	cat, _ := NewCatalog([]Module{&fakeModule{name: "m", desc: desc}}, nil)
	tools, res, prompts := cat.Counts()
	if tools != 1 || res != 2 || prompts != 1 {
		t.Fatalf("tools %d, resources+templates %d, prompts %d; want 1, 2, 1", tools, res, prompts)
	}
	if _, ok := cat.toolIdx["ok"]; !ok {
		t.Fatal("the clean tool was refused")
	}
}

func TestModuleOf(t *testing.T) {
	s := newTestServer(t, 0)
	for line, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`:                                                 "fake",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`:                                                 "",
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"fake://t/1"}}`:                                        "fake",
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}`:                                                   "fake",
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{}}}`: "fake",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:                                                                          "",
	} {
		msg, _, err := Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ModuleOf(msg); got != want {
			t.Errorf("ModuleOf(%s) = %q, want %q", line, got, want)
		}
	}
}
