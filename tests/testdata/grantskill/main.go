// Command grantskill is a guest for the end-to-end grant tests: a tool,
// instructions and a skill with a supporting file, all of which its
// policy's [access] grant hides from a caller it does not name.
package main

import (
	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

func main() {
	s := guest.New("grantskill", "1.0.0", guest.WithInstructions("the grantskill module's instructions"))
	guest.AddTool(s, guest.Tool{Name: "granted_tool", Description: "A tool behind a grant."},
		func(c *guest.Context, _ struct{}) (string, error) { return "granted", nil })
	s.AddSkill(guest.Skill{Name: "granted-skill", Files: []guest.SkillFile{
		guest.SkillText("SKILL.md", "---", "name: granted-skill", "description: A skill behind a grant.", "---", "granted skill body"),
		guest.SkillText("references/detail.md", "granted detail"),
	}})
	s.Run()
}
