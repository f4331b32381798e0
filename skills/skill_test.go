package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const manifest = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nversion: 1.0\ncreated: 2026-01-02\nmetadata:\n  author: me\n---\n# Body\n"

func TestNew(t *testing.T) {
	s, err := New("pdf-processing", []Input{
		{Path: "references/FORMS.md", Data: []byte("# Forms\n")},
		{Path: "SKILL.md", Data: []byte(manifest)},
		{Path: "assets/a b.bin", Data: []byte{0xff, 0xfe}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.URI() != "skill://pdf-processing/SKILL.md" || s.Name != "pdf-processing" || s.Description != "Extract, fill, and assemble PDF documents" {
		t.Fatalf("skill %s %q %q", s.URI(), s.Name, s.Description)
	}
	var fm map[string]any
	if err := json.Unmarshal(s.Frontmatter, &fm); err != nil {
		t.Fatal(err)
	}
	// YAML 1.2 core typing: 1.0 is a number; a date stays a string.
	if fm["version"] != 1.0 || fm["created"] != "2026-01-02" || fm["metadata"].(map[string]any)["author"] != "me" {
		t.Fatalf("frontmatter %s", s.Frontmatter)
	}
	paths := []string{}
	for _, f := range s.Files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "SKILL.md,assets/a b.bin,references/FORMS.md" {
		t.Fatalf("files %v", paths)
	}
	sum := sha256.Sum256([]byte(manifest))
	if f := s.Files[0]; f.Digest != "sha256:"+hex.EncodeToString(sum[:]) || f.MimeType != "text/markdown" || !f.Text {
		t.Fatalf("SKILL.md %+v", f)
	}
	if f := s.Files[1]; f.URI != "skill://pdf-processing/assets/a%20b.bin" || f.Text || f.MimeType != "application/octet-stream" {
		t.Fatalf("binary file %+v", f)
	}
	if s.Size != int64(len(manifest)+8+2) {
		t.Fatalf("size %d", s.Size)
	}
	var entry struct {
		URI       string
		Resources []struct {
			URI, Digest string
			Size        int
		}
	}
	if err := json.Unmarshal(s.Entry(), &entry); err != nil || entry.URI != s.URI() || len(entry.Resources) != 3 || entry.Resources[0].Size != len(manifest) {
		t.Fatalf("entry %s: %v", s.Entry(), err)
	}
	var read struct {
		Contents []struct{ URI, MimeType, Text, Blob string }
	}
	contents := func(f *File) []byte {
		b, err := f.Contents()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := json.Unmarshal(contents(s.Files[1]), &read); err != nil || read.Contents[0].Blob != "//4=" || read.Contents[0].Text != "" {
		t.Fatalf("blob contents %s: %v", contents(s.Files[1]), err)
	}
	if err := json.Unmarshal(contents(s.Files[0]), &read); err != nil || read.Contents[0].Text != manifest {
		t.Fatalf("text contents %s: %v", contents(s.Files[0]), err)
	}
}

func TestNewRefuses(t *testing.T) {
	ok := Input{Path: "SKILL.md", Data: []byte(manifest)}
	md := func(fm string) Input { return Input{Path: "SKILL.md", Data: []byte("---\n" + fm + "\n---\nbody\n")} }
	big := make([]Input, MaxFiles+1)
	for i := range big {
		big[i] = Input{Path: "f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "/" + string(rune('a'+i/26)), Data: []byte("x")}
	}
	big[0] = ok
	cases := []struct {
		name, path string
		files      []Input
		want       string
	}{
		{"upper-case name", "PDF", []Input{ok}, "segment"},
		{"double hyphen", "pdf--x", []Input{ok}, "segment"},
		{"empty segment", "a//pdf-processing", []Input{ok}, "segment"},
		{"too deep", "a/b/c/d/pdf-processing", []Input{ok}, "segments"},
		{"dot-dot", "pdf-processing", []Input{ok, {Path: "../x", Data: nil}}, `".."`},
		{"dot-dot inside", "pdf-processing", []Input{ok, {Path: "a/../../x"}}, `".."`},
		{"absolute", "pdf-processing", []Input{ok, {Path: "/etc/passwd"}}, "absolute"},
		{"control character", "pdf-processing", []Input{ok, {Path: "a\nb"}}, "control"},
		{"backslash", "pdf-processing", []Input{ok, {Path: `a\b`}}, "backslash"},
		{"duplicate", "pdf-processing", []Input{ok, ok}, "twice"},
		{"file and directory", "pdf-processing", []Input{ok, {Path: "a"}, {Path: "a/b"}}, "both a file and a directory"},
		{"no SKILL.md", "pdf-processing", []Input{{Path: "README.md"}}, "no SKILL.md"},
		{"name differs", "other", []Input{ok}, "differs"},
		{"no frontmatter", "pdf-processing", []Input{{Path: "SKILL.md", Data: []byte("# hi\n")}}, "---"},
		{"unclosed", "pdf-processing", []Input{{Path: "SKILL.md", Data: []byte("---\nname: x\n")}}, "closing"},
		{"not a mapping", "pdf-processing", []Input{md("- a")}, "mapping"},
		{"no description", "pdf-processing", []Input{md("name: pdf-processing")}, "description"},
		{"bad yaml", "pdf-processing", []Input{md("name: [")}, "YAML"},
		{"metadata not strings", "pdf-processing", []Input{md("name: pdf-processing\ndescription: d\nmetadata:\n  n: 1")}, "metadata"},
		{"too many files", "pdf-processing", big, "files"},
		{"too large", "pdf-processing", []Input{ok, {Path: "big", Data: make([]byte, MaxBytes)}}, "larger"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.path, c.files)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pdf-processing/SKILL.md", manifest)
	write("pdf-processing/references/FORMS.md", "# Forms\n")
	write("pdf-processing/.git/config", "hidden")
	write("acme/code-review/SKILL.md", "---\nname: code-review\ndescription: Review code\n---\n")
	write("broken/SKILL.md", "---\nname: other\ndescription: d\n---\n")
	write("notes.txt", "not a skill")
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "pdf-processing", "link")); err != nil {
		t.Fatal(err)
	}
	fp1, err := Fingerprint(dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded, refused, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(refused) != 1 || !strings.Contains(refused[0].Error(), "differs") {
		t.Fatalf("refused %v", refused)
	}
	got := map[string][]string{}
	for _, s := range loaded {
		for _, f := range s.Files {
			got[s.Path] = append(got[s.Path], f.Path)
		}
	}
	if strings.Join(got["pdf-processing"], ",") != "SKILL.md,references/FORMS.md" || strings.Join(got["acme/code-review"], ",") != "SKILL.md" || len(got) != 2 {
		t.Fatalf("loaded %v", got)
	}
	if fp2, _ := Fingerprint(dir); fp2 != fp1 {
		t.Fatal("fingerprint changed without a change")
	}
	write("pdf-processing/references/FORMS.md", "# Forms, longer\n")
	if fp3, _ := Fingerprint(dir); fp3 == fp1 {
		t.Fatal("fingerprint did not change with a file")
	}
	if _, _, err := LoadDir(filepath.Join(dir, "nope")); err == nil {
		t.Fatal("LoadDir of a missing directory succeeded")
	}
}
