package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// The TypeScript SDK v2 client (@modelcontextprotocol/client) and its
// Skills extension (ext/skills) run as `node tsv2/skills.mjs`, which lists
// and loads every skill wasmcp serves from a --skills directory, verifying
// each file against its entry (size, digest, SKILL.md frontmatter).

// skillsReport is what tsv2/skills.mjs prints.
type skillsReport struct {
	ProtocolVersion string `json:"protocolVersion"`
	Supported       bool   `json:"supported"`
	DirectoryRead   bool   `json:"directoryRead"`
	Listing         struct {
		Count      int     `json:"count"`
		TTLMs      *int64  `json:"ttlMs"`
		CacheScope *string `json:"cacheScope"`
	} `json:"listing"`
	Skills []struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		GetTTLMs    *int64         `json:"getTtlMs"`
		Manifest    struct {
			Verified    bool           `json:"verified"`
			Frontmatter map[string]any `json:"frontmatter"`
			Body        string         `json:"body"`
		} `json:"manifest"`
		Files []struct {
			URI      string  `json:"uri"`
			Size     int     `json:"size"`
			Verified bool    `json:"verified"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
		} `json:"files"`
		Directory []struct {
			URI      string `json:"uri"`
			Name     string `json:"name"`
			MimeType string `json:"mimeType"`
		} `json:"directory"`
	} `json:"skills"`
	UnknownCode any `json:"unknownCode"`
}

// skillMD is the SKILL.md of the interop skill: frontmatter with a nested
// map, a date and a number (typed alike by wasmcp and the client's YAML
// parser, or the client refuses the skill), and a body.
const skillMD = `---
name: release-notes
description: Write release notes from a list of merged changes
license: Apache-2.0
compatibility: Any agent that can read git history
metadata:
  author: wasmcp
  reviewed: 2026-11-30
---
# Release notes

Group the changes as [the template](assets/template.md) shows.
`

// writeInteropSkills writes a skills directory: the grouped skill
// docs/release-notes with a text template, a file whose name needs
// percent-encoding and a binary file.
func writeInteropSkills(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{
		"docs/release-notes/SKILL.md":             []byte(skillMD),
		"docs/release-notes/assets/template.md":   []byte("## Added\n\n## Fixed\n"),
		"docs/release-notes/assets/old notes.txt": []byte("v0.1: first\n"),
		"docs/release-notes/assets/logo.bin":      {0x89, 'P', 'N', 'G', 0x00, 0xff, 0xfe},
	}
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTypeScriptV2SkillsHTTP(t *testing.T) {
	t.Parallel()
	url := startHTTP(t, "--skills", writeInteropSkills(t)) + "/mcp"
	for _, era := range []string{"legacy", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			rep := runSkillsClient(t, "http", url, era)
			checkSkillsReport(t, rep, era)
		})
	}
}

func TestTypeScriptV2SkillsStdio(t *testing.T) {
	t.Parallel()
	args := append([]string{"stdio", "legacy", wasmcpBin}, serveArgs("--skills", writeInteropSkills(t))...)
	checkSkillsReport(t, runSkillsClient(t, args...), "legacy")
}

func checkSkillsReport(t *testing.T, rep *skillsReport, era string) {
	t.Helper()
	wantVersion := era
	if era == "legacy" {
		wantVersion = "2025-11-25"
	}
	if rep.ProtocolVersion != wantVersion || !rep.Supported || !rep.DirectoryRead {
		t.Fatalf("negotiated %q, extension %v, directoryRead %v; want %s, true, true", rep.ProtocolVersion, rep.Supported, rep.DirectoryRead, wantVersion)
	}
	modern := era != "legacy"
	if modern != (rep.Listing.TTLMs != nil && rep.Listing.CacheScope != nil) {
		t.Errorf("skills/list ttlMs %v cacheScope %v in era %s", rep.Listing.TTLMs, rep.Listing.CacheScope, era)
	}
	if rep.Listing.Count != 1 || len(rep.Skills) != 1 {
		t.Fatalf("listed %d skills, want 1", rep.Listing.Count)
	}
	s := rep.Skills[0]
	if s.URI != "skill://docs/release-notes/SKILL.md" {
		t.Errorf("skill uri %q", s.URI)
	}
	if modern != (s.GetTTLMs != nil) {
		t.Errorf("skills/get ttlMs %v in era %s", s.GetTTLMs, era)
	}
	// The client checked the frontmatter against its own parse of SKILL.md.
	meta, _ := s.Manifest.Frontmatter["metadata"].(map[string]any)
	if !s.Manifest.Verified || meta["reviewed"] != "2026-11-30" || s.Frontmatter["name"] != "release-notes" ||
		!strings.HasPrefix(s.Manifest.Body, "# Release notes") {
		t.Errorf("SKILL.md as loaded: %+v (entry frontmatter %v)", s.Manifest, s.Frontmatter)
	}
	var uris []string
	for _, f := range s.Files {
		uris = append(uris, f.URI)
		if !f.Verified {
			t.Errorf("%s not verified", f.URI)
		}
		if strings.HasSuffix(f.URI, "logo.bin") && (f.Size != 7 || f.Text != nil) {
			t.Errorf("binary file read as %+v", f)
		}
		if strings.HasSuffix(f.URI, "template.md") && (f.Text == nil || *f.Text != "## Added\n\n## Fixed\n" || f.MimeType != "text/markdown") {
			t.Errorf("template read as %+v", f)
		}
	}
	slices.Sort(uris)
	want := []string{
		"skill://docs/release-notes/SKILL.md",
		"skill://docs/release-notes/assets/logo.bin",
		"skill://docs/release-notes/assets/old%20notes.txt",
		"skill://docs/release-notes/assets/template.md",
	}
	if !slices.Equal(uris, want) {
		t.Errorf("files read %v, want %v", uris, want)
	}
	var dir []string
	for _, d := range s.Directory {
		dir = append(dir, d.Name+" "+d.MimeType)
	}
	if strings.Join(dir, ", ") != "SKILL.md text/markdown, assets inode/directory" {
		t.Errorf("root directory %v", dir)
	}
	if code, _ := rep.UnknownCode.(float64); code != -32602 {
		t.Errorf("skills/get of an unknown skill: %v, want -32602", rep.UnknownCode)
	}
}

// runSkillsClient runs tsv2/skills.mjs with args and returns its report.
func runSkillsClient(t *testing.T, args ...string) *skillsReport {
	t.Helper()
	tsv2Once.Do(func() {
		tsv2Dir = filepath.Join(repoRoot, "tests", "interop", "tsv2")
		tsv2Node, tsv2Skip, tsv2Error = npmProject(tsv2Dir, 20)
	})
	if tsv2Skip != "" {
		t.Skip(tsv2Skip)
	}
	if tsv2Error != "" {
		t.Fatal(tsv2Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tsv2Node, append([]string{filepath.Join(tsv2Dir, "skills.mjs")}, args...)...)
	var stdout bytes.Buffer
	stderr := &e2e.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	defer checkServerLog(t, "node skills.mjs", stderr)
	if err := cmd.Run(); err != nil {
		t.Fatalf("node skills.mjs %s: %v", strings.Join(args[:2], " "), err)
	}
	var rep skillsReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("skills.mjs printed %q: %v", stdout.String(), err)
	}
	return &rep
}

var (
	tsv2Once            sync.Once
	tsv2Node, tsv2Dir   string
	tsv2Skip, tsv2Error string
)
