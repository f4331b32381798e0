package protocol

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/skills"
)

// scopeServer serves two modules, "open" and "secret", each with a tool,
// a resource, a template, a prompt and a skill.
func scopeServer(t *testing.T) *Server {
	t.Helper()
	obj := json.RawMessage(`{"type":"object"}`)
	mk := func(n string) *skillModule {
		desc := &abi.Description{ABIVersion: 1, Name: n,
			Tools:             []abi.Tool{{Name: n + "_tool", InputSchema: obj}},
			Resources:         []abi.Resource{{URI: n + "://r", Name: n}},
			ResourceTemplates: []abi.ResourceTemplate{{URITemplate: n + "://t/{x}", Name: n + "t"}},
			Prompts:           []abi.Prompt{{Name: n + "_prompt"}},
		}
		m := &skillModule{fakeModule: fakeModule{name: n, desc: desc}, skills: []*skills.Skill{testSkill(t, n+"skill", n+" skill",
			skills.Input{Path: "ref/x.md", Data: []byte("x")})}}
		m.call = func(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
			var p struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(params, &p)
			return &contract.Reply{Result: []byte(`{"contents":[{"uri":"` + p.URI + `","text":"hi"}]}`)}, nil
		}
		return m
	}
	s := NewServer(Options{Name: "test", Version: "1.0"})
	cat, _ := NewCatalogWithSkills([]Module{mk("open"), mk("secret")}, nil, nil)
	s.SetCatalog(cat)
	return s
}

// scopeOf is the cacheScope of a modern answer to method with params, ""
// when it has none; the answer must be a result.
func scopeOf(t *testing.T, s *Server, who, method, params string) string {
	t.Helper()
	if params != "" {
		params += ","
	}
	r := handleHint(t, s, nil, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+params+modernMeta+`}}`, nil,
		Hint{Version: "2026-07-28", Principal: who})
	var out struct {
		Result *struct {
			CacheScope string `json:"cacheScope"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil || out.Result == nil {
		t.Fatalf("%s %s as %q: %s", method, params, who, r.Body)
	}
	return out.Result.CacheScope
}

// TestCacheScopeFollowsWhoAsks (issue 36, 7): every answer that carries
// cacheScope (the four lists, resources/read of a resource, a template
// and a skill file, resources/directory/read, skills/list, skills/get,
// server/discover, whose module instructions TestInstructionsFollowGrant
// covers) is "public" only when every principal would get the
// same one: without access rules; with them, a list is private for every
// caller as soon as a grant filters any of it (alice, who sees it all,
// too), and an answer about an item a grant restricts is private even to
// the caller it allows; an open item's answer stays public, unless its
// guest is told who asks (expose_principal). Before, alice's filtered
// tools/list and her read of a resource granted to her alone were public.
func TestCacheScopeFollowsWhoAsks(t *testing.T) {
	type c struct{ method, params string }
	lists := []c{
		{"tools/list", ""}, {"resources/list", ""}, {"resources/templates/list", ""}, {"prompts/list", ""},
		{"skills/list", ""},
	}
	openItems := []c{
		{"resources/read", `"uri":"open://r"`}, {"resources/read", `"uri":"open://t/1"`},
		{"resources/read", `"uri":"skill://openskill/SKILL.md"`}, {"skills/get", `"uri":"skill://openskill/SKILL.md"`},
		{"resources/directory/read", `"uri":"skill://openskill/ref"`},
		{"server/discover", ""}, // no module instructions: alike for all (TestInstructionsFollowGrant has them)
	}
	secretItems := []c{
		{"resources/read", `"uri":"secret://r"`}, {"resources/read", `"uri":"secret://t/1"`},
		{"resources/read", `"uri":"skill://secretskill/SKILL.md"`}, {"skills/get", `"uri":"skill://secretskill/SKILL.md"`},
		{"resources/directory/read", `"uri":"skill://secretskill/ref"`},
	}
	s := scopeServer(t)
	for _, m := range append(append(append([]c{}, lists...), openItems...), secretItems...) {
		if got := scopeOf(t, s, "bob", m.method, m.params); got != "public" {
			t.Errorf("no access rules: %s %s is %q, want public", m.method, m.params, got)
		}
	}

	s = scopeServer(t)
	s.opts.Access = func(ctx context.Context, principal string, mod Module, kind, name string) bool {
		return mod.Name() == "open" || principal == "alice"
	}
	s.opts.Instructions = "hello"
	for _, who := range []string{"alice", "bob"} {
		for _, m := range lists {
			if got := scopeOf(t, s, who, m.method, m.params); got != "private" {
				t.Errorf("%s's %s is %q, want private: a grant filters it", who, m.method, got)
			}
		}
		for _, m := range openItems {
			if got := scopeOf(t, s, who, m.method, m.params); got != "public" {
				t.Errorf("%s's %s %s is %q, want public: no grant restricts it", who, m.method, m.params, got)
			}
		}
	}
	for _, m := range secretItems {
		if got := scopeOf(t, s, "alice", m.method, m.params); got != "private" {
			t.Errorf("alice's %s %s is %q, want private: granted to her alone", m.method, m.params, got)
		}
	}

	// A guest told who asks answers each caller its own way.
	s.opts.GuestMeta = func(ctx context.Context, principal string, mod Module) []byte {
		if mod.Name() != "open" {
			return nil
		}
		b, _ := json.Marshal(map[string]string{"name": principal})
		return b
	}
	for _, m := range openItems[:2] { // open://r, open://t/1
		if got := scopeOf(t, s, "bob", m.method, m.params); got != "private" {
			t.Errorf("%s %s of a guest told who asks is %q, want private", m.method, m.params, got)
		}
	}
	if got := scopeOf(t, s, "bob", "skills/get", `"uri":"skill://openskill/SKILL.md"`); got != "public" {
		t.Errorf("an open skill is served by the host, not the guest: %q", got)
	}
}
