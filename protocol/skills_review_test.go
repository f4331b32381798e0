package protocol

import (
	"context"
	"strings"
	"testing"
)

// TestSkillsGrantURISpellings (outside review): another spelling of a
// hidden skill's file or directory — a trailing or doubled slash, dot
// segments, another case of the scheme, the name or the file, an encoded
// letter or slash, a query or fragment — never reads it, gets it, lists
// its directory or subscribes to it for a caller its grant does not name.
func TestSkillsGrantURISpellings(t *testing.T) {
	s, _ := newSkillServer(t, 2)
	s.opts.Access = func(ctx context.Context, principal string, mod Module, kind, name string) bool {
		return principal == "alice"
	}
	alice, bob := Hint{Principal: "alice"}, Hint{Principal: "bob"}
	sess := initialized(t, s, "2025-11-25")
	call := func(h Hint, body string) string { return string(handleHint(t, s, sess, body, nil, h).Body) }
	read := func(h Hint, method, uri string) string {
		return call(h, `{"jsonrpc":"2.0","id":4,"method":"`+method+`","params":{"uri":"`+uri+`"}}`)
	}
	good := read(alice, "resources/read", "skill://pdf/SKILL.md")
	if !strings.Contains(good, `"contents"`) {
		t.Fatalf("alice cannot read the skill: %s", good)
	}
	for _, u := range []string{
		"skill://pdf/SKILL.md", "skill://pdf/SKILL.md/", "skill://pdf//SKILL.md", "skill://pdf/./SKILL.md",
		"skill://pdf/references/../SKILL.md", "SKILL://pdf/SKILL.md", "Skill://pdf/SKILL.md", "skill://PDF/SKILL.md",
		"skill://pdf/skill.md", "skill://%70df/SKILL.md", "skill://pdf%2FSKILL.md", "skill://pdf/SKILL.md?x=1",
		"skill://pdf/SKILL.md#x", "skill:///pdf/SKILL.md", "skill:pdf/SKILL.md", "skill://pdf/SKILL%2Emd",
		"skill://pdf/references/FORMS.md/", "skill://pdf/references//FORMS.md",
	} {
		for _, m := range []string{"resources/read", "skills/get", "resources/directory/read"} {
			if got := read(bob, m, u); !strings.Contains(got, `"error"`) {
				t.Errorf("bob's %s of %s: %s", m, u, got)
			}
		}
		bs := initialized(t, s, "2025-11-25")
		handleHint(t, s, bs, `{"jsonrpc":"2.0","id":8,"method":"resources/subscribe","params":{"uri":"`+u+`"}}`, nil, bob)
		// A spelling that is not the file's is an unknown URI: kept as
		// any is, never notified (updates name the catalog's spelling).
		if bs.Subscribed("skill://pdf/SKILL.md") || canonicalSkillURI(u) == "skill://pdf/SKILL.md" && bs.Subscribed(u) {
			t.Errorf("bob is subscribed through %s", u)
		}
	}
	for _, d := range []string{"skill://pdf//", "skill://pdf/./references", "skill://PDF", "SKILL://pdf", "skill://pdf/references/", "skill://%70df"} {
		if got := read(bob, "resources/directory/read", d); !strings.Contains(got, `"error"`) {
			t.Errorf("bob's directory read of %s: %s", d, got)
		}
	}
}
