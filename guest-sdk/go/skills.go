package guest

import (
	"fmt"
	"strings"

	"github.com/wasmcp/wasmcp/abi"
)

// Skill is an Agent Skill the module ships (MCP Skills extension): a name
// equal to its SKILL.md frontmatter name, and its files, SKILL.md included.
// The host checks it at load, computes digests and sizes, and serves its
// files as skill:// resources; the guest runs for none of it.
type Skill = abi.Skill

// SkillFile is one file of a Skill: a path relative to the skill's root
// and its content as Text (UTF-8) or Blob.
type SkillFile = abi.SkillFile

// AddSkill ships a skill. It panics on a skill without a name or a
// SKILL.md, or on a name added twice (the host checks everything else at
// load).
func (s *Server) AddSkill(sk Skill) {
	if sk.Name == "" {
		panic("guest: AddSkill: empty skill name")
	}
	hasManifest := false
	for _, f := range sk.Files {
		if f.Path == "SKILL.md" {
			hasManifest = true
		}
	}
	if !hasManifest {
		panic(fmt.Sprintf("guest: AddSkill: skill %q has no SKILL.md", sk.Name))
	}
	for _, o := range s.skills {
		if o.Name == sk.Name {
			panic(fmt.Sprintf("guest: AddSkill: skill %q added twice", sk.Name))
		}
	}
	s.skills = append(s.skills, sk)
}

// SkillText is a SkillFile holding text; its lines are joined with "\n"
// and end with one.
func SkillText(path string, lines ...string) SkillFile {
	return SkillFile{Path: path, Text: strings.Join(lines, "\n") + "\n"}
}
