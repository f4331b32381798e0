package host

import (
	"context"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

func skillDesc(name, skillMD string, extra string) []byte {
	return []byte(`{"abiVersion":1,"skills":[{"name":"` + name + `","files":[{"path":"SKILL.md","text":` + skillMD + `}` + extra + `]}]}`)
}

const goodSkillMD = `"---\nname: notes\ndescription: Take notes\n---\nbody\n"`

func TestModuleSkills(t *testing.T) {
	e := newEngine(t, Limits{})
	desc := skillDesc("notes", goodSkillMD, `,{"path":"assets/x.bin","blob":"AP8="}`)
	m, err := e.Load(context.Background(), "skilled", appendCustomSection(probeWasm, abi.CustomSection, desc), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	sk := m.Skills()
	if len(sk) != 1 || sk[0].URI() != "skill://notes/SKILL.md" || len(sk[0].Files) != 2 || sk[0].Size != int64(len("---\nname: notes\ndescription: Take notes\n---\nbody\n")+2) {
		t.Fatalf("skills %+v", sk)
	}
	if f := sk[0].Files[1]; f.Path != "assets/x.bin" || f.Text || !strings.HasPrefix(f.Digest, "sha256:") {
		t.Fatalf("binary file %+v", f)
	}
}

func TestModuleSkillRefusals(t *testing.T) {
	e := newEngine(t, Limits{})
	cases := []struct{ name, desc, want string }{
		{"name-differs", string(skillDesc("other", goodSkillMD, "")), "differs"},
		{"dot-dot", string(skillDesc("notes", goodSkillMD, `,{"path":"../../etc/passwd","text":"x"}`)), `".."`},
		{"absolute", string(skillDesc("notes", goodSkillMD, `,{"path":"/etc/passwd","text":"x"}`)), "absolute"},
		{"control", string(skillDesc("notes", goodSkillMD, `,{"path":"a\u0007b","text":"x"}`)), "control"},
		{"text-and-blob", string(skillDesc("notes", goodSkillMD, `,{"path":"a","text":"x","blob":"AA=="}`)), "both text and blob"},
		{"no-frontmatter", string(skillDesc("notes", `"# notes\n"`, "")), "frontmatter"},
		{"twice", `{"abiVersion":1,"skills":[{"name":"notes","files":[{"path":"SKILL.md","text":` + goodSkillMD + `}]},{"name":"notes","files":[]}]}`, "declared twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Load(context.Background(), c.name, appendCustomSection(probeWasm, abi.CustomSection, []byte(c.desc)), Policy{})
			if !IsKind(err, KindLoad) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want a load error containing %q", err, c.want)
			}
		})
	}
}
