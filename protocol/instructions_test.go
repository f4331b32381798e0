package protocol

import (
	"encoding/json"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// TestModuleInstructionsReachInitialize: the modules' instructions (which
// abi/README.md promises to the client) are combined with the operator's
// in initialize and server/discover.
func TestModuleInstructionsReachInitialize(t *testing.T) {
	mod := func(name, instr string) Module {
		return &fakeModule{name: name, desc: &abi.Description{ABIVersion: 1, Name: name, Instructions: instr}}
	}
	for _, c := range []struct {
		operator string
		mods     []Module
		want     string
	}{
		{"", nil, ""},
		{"Be brief.", nil, "Be brief."},
		{"", []Module{mod("b", "Use b for B.\n"), mod("a", ""), mod("c", "C rules.")}, "## b\n\nUse b for B.\n\n## c\n\nC rules."},
		{"Be brief.", []Module{mod("b", "Use b.")}, "Be brief.\n\n## b\n\nUse b."},
	} {
		s := NewServer(Options{Name: "t", Instructions: c.operator})
		cat, _ := NewCatalog(c.mods, nil)
		s.SetCatalog(cat)
		r := handle(t, s, NewSession(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
		var m struct {
			Result struct {
				Instructions *string `json:"instructions"`
			} `json:"result"`
		}
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatal(err)
		}
		got := ""
		if m.Result.Instructions != nil {
			got = *m.Result.Instructions
		}
		if got != c.want || (c.want == "" && m.Result.Instructions != nil) {
			t.Errorf("instructions %q, want %q", got, c.want)
		}
	}
}

// TestResourceErrorKeepsGuestData: a guest's not-found error keeps its data
// and gains the uri SEP-2164 asks for.
func TestResourceErrorKeepsGuestData(t *testing.T) {
	def := []byte(`{"uri":"u"}`)
	for in, want := range map[string]string{
		``:                      `{"uri":"u"}`,
		`"text"`:                `{"uri":"u"}`,
		`{"reason":"gone"}`:     `{"reason":"gone","uri":"u"}`,
		`{"uri":"other","n":1}`: `{"n":1,"uri":"other"}`,
	} {
		var got, exp map[string]any
		_ = json.Unmarshal(withURI([]byte(in), "u", def), &got)
		_ = json.Unmarshal([]byte(want), &exp)
		if len(got) != len(exp) || got["uri"] != exp["uri"] || got["reason"] != exp["reason"] {
			t.Errorf("withURI(%s) = %v, want %s", in, got, want)
		}
	}
}
