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
