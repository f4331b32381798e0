package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wasmcp serve --skills, as a separate process over stdio: the skills
// directory is served and hot-reloaded (a new skill, an edited file, a
// refused skill, a removed one), and a bad --skills is refused at start.

func writeSkillFile(t *testing.T, dir, path, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	// Written beside and renamed, as a deploy would.
	tmp := filepath.Join(filepath.Dir(full), ".tmp-"+filepath.Base(full))
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, full); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"
}

func TestSkillsDirectoryServedAndReloaded(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	writeSkillFile(t, skills, "alpha/SKILL.md", skillMD("alpha", "first"))
	writeSkillFile(t, skills, "alpha/references/notes.md", "# Notes\n")
	s := startServe(t, "--tools", t.TempDir(), "--skills", skills, "--stdio", "--cache-dir", compileCache)
	r := newRawSession(t, s)
	init := r.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e", "version": "1"}})
	ext, _ := init["capabilities"].(map[string]any)["extensions"].(map[string]any)
	if ext["io.modelcontextprotocol/skills"] == nil {
		t.Fatalf("initialize declares no skills extension: %v", init)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	listed := func() string {
		var out []string
		for _, e := range r.result("skills/list", map[string]any{})["skills"].([]any) {
			fm := e.(map[string]any)["frontmatter"].(map[string]any)
			out = append(out, e.(map[string]any)["uri"].(string)+"="+fm["description"].(string))
		}
		return strings.Join(out, " ")
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; server log:\n%s", what, s.Stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if got := listed(); got != "skill://alpha/SKILL.md=first" {
		t.Fatalf("skills/list: %q", got)
	}
	read := r.result("resources/read", map[string]any{"uri": "skill://alpha/references/notes.md"})
	if c := read["contents"].([]any)[0].(map[string]any); c["text"] != "# Notes\n" {
		t.Fatalf("resources/read: %v", read)
	}
	r.result("resources/subscribe", map[string]any{"uri": "skill://alpha/SKILL.md"})

	// A new skill: the resources list changed (its SKILL.md is listed).
	writeSkillFile(t, skills, "beta/SKILL.md", skillMD("beta", "second"))
	waitFor("beta", func() bool { return listed() == "skill://alpha/SKILL.md=first skill://beta/SKILL.md=second" })
	waitFor("resources/list_changed", func() bool { return len(r.notifications("notifications/resources/list_changed")) > 0 })

	// An edited SKILL.md: its subscribers hear of it.
	writeSkillFile(t, skills, "alpha/SKILL.md", skillMD("alpha", "first, edited"))
	waitFor("alpha edited", func() bool { return strings.Contains(listed(), "skill://alpha/SKILL.md=first, edited") })
	waitFor("resources/updated", func() bool {
		for _, n := range r.notifications("notifications/resources/updated") {
			if n["params"].(map[string]any)["uri"] == "skill://alpha/SKILL.md" {
				return true
			}
		}
		return false
	})

	// A skill whose name is not its directory's is refused and logged;
	// the others keep serving. A removed skill goes away.
	writeSkillFile(t, skills, "gamma/SKILL.md", skillMD("delta", "misnamed"))
	waitFor("gamma refused", func() bool { return strings.Contains(s.Stderr.String(), "skill refused") })
	if err := os.RemoveAll(filepath.Join(skills, "beta")); err != nil {
		t.Fatal(err)
	}
	waitFor("beta removed", func() bool { return listed() == "skill://alpha/SKILL.md=first, edited" })
	if m := r.call("skills/get", map[string]any{"uri": "skill://beta/SKILL.md"}); m["error"].(map[string]any)["code"] != -32602.0 {
		t.Fatalf("skills/get of a removed skill: %v", m)
	}
}

func TestSkillsFlagNotADirectory(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(wasmcpBin, "serve", "--tools", t.TempDir(), "--skills", filepath.Join(t.TempDir(), "nope")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--skills") {
		t.Fatalf("serve --skills of a missing directory: %v\n%s", err, out)
	}
}
