package guest

import (
	"strings"
	"testing"
)

func TestAddSkill(t *testing.T) {
	s := New("skilled", "1.0.0")
	s.AddSkill(Skill{Name: "notes", Files: []SkillFile{
		SkillText("SKILL.md", "---", "name: notes", "description: Take notes", "---", "body"),
		{Path: "x.bin", Blob: []byte{0, 1}},
	}})
	d := s.Description()
	if len(d.Skills) != 1 || d.Skills[0].Files[0].Text != "---\nname: notes\ndescription: Take notes\n---\nbody\n" {
		t.Fatalf("description skills %+v", d.Skills)
	}
	for name, bad := range map[string]Skill{
		"no name":     {Files: []SkillFile{{Path: "SKILL.md"}}},
		"no SKILL.md": {Name: "x", Files: []SkillFile{{Path: "README.md"}}},
		"twice":       {Name: "notes", Files: []SkillFile{{Path: "SKILL.md"}}},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "AddSkill") {
					t.Errorf("%s: recovered %v", name, r)
				}
			}()
			s.AddSkill(bad)
		}()
	}
}
