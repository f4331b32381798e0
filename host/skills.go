package host

import (
	"fmt"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/skills"
)

// Skills returns the Agent Skills the module ships in its description,
// checked and with their digests and sizes computed at load. Do not modify
// them.
func (m *Module) Skills() []*skills.Skill { return m.skills }

// buildSkills checks the skills of a description: a module whose skill
// breaks a rule (name, file paths, frontmatter, limits) is refused.
func buildSkills(in []abi.Skill) ([]*skills.Skill, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]*skills.Skill, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i := range in {
		s := &in[i]
		if seen[s.Name] {
			return nil, fmt.Errorf("skill %q declared twice", s.Name)
		}
		seen[s.Name] = true
		files := make([]skills.Input, 0, len(s.Files))
		for j := range s.Files {
			f := &s.Files[j]
			if f.Text != "" && f.Blob != nil {
				return nil, fmt.Errorf("skill %q: file %q has both text and blob", s.Name, f.Path)
			}
			data := f.Blob
			if data == nil {
				data = []byte(f.Text)
			}
			files = append(files, skills.Input{Path: f.Path, Data: data, MimeType: f.MimeType})
		}
		sk, err := skills.New(s.Name, files)
		if err != nil {
			return nil, err
		}
		out = append(out, sk)
	}
	return out, nil
}
