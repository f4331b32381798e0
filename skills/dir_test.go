package skills

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// skillTree writes files (path → content) under a new directory.
func skillTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func skillManifest(name string) string {
	return "---\nname: " + name + "\ndescription: d\n---\nbody\n"
}

// TestLoadDirRefusesHardLinks: a file of a skill that is a hard link (its
// other name may be any file of the same disk the server can read, which
// symbolic links and ".." could not reach) refuses its skill.
func TestLoadDirRefusesHardLinks(t *testing.T) {
	dir := skillTree(t, map[string]string{"one/SKILL.md": skillManifest("one"), "two/SKILL.md": skillManifest("two")})
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "one", "notes.md")); err != nil {
		t.Skipf("hard links: %v", err)
	}
	loaded, refused, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 1 || loaded[0].Path != "two" || len(refused) != 1 || !strings.Contains(refused[0].Error(), "hard links") {
		t.Fatalf("loaded %d, refused %v", len(loaded), refused)
	}
}

// TestLoadDirKeepsOnlyMetadata: a skills directory's files other than
// SKILL.md are not held in memory but read from disk when served; a file
// changed since it was checked is not served until it is checked again.
func TestLoadDirKeepsOnlyMetadata(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	dir := skillTree(t, map[string]string{"one/SKILL.md": skillManifest("one"), "one/big.txt": big})
	loaded, _, err := LoadDir(dir)
	if err != nil || len(loaded) != 1 {
		t.Fatalf("%v %v", loaded, err)
	}
	var f *File
	for _, x := range loaded[0].Files {
		if x.Path == "big.txt" {
			f = x
		} else if x.Data == nil {
			t.Fatal("SKILL.md is not kept")
		}
	}
	if f == nil || f.Data != nil || f.Size != 1<<20 {
		t.Fatalf("big.txt: kept %d bytes, size %d", len(f.Data), f.Size)
	}
	b, err := f.Contents()
	var read struct{ Contents []struct{ Text string } }
	if err != nil || json.Unmarshal(b, &read) != nil || read.Contents[0].Text != big {
		t.Fatalf("reading big.txt: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "one", "big.txt"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Contents(); !errors.Is(err, ErrChanged) {
		t.Fatalf("reading a changed file: %v", err)
	}
}

// TestLoadDirReadsOnlyWhatChanged: reading the directory again keeps the
// skills whose files did not change (the same *Skill) and reads the
// changed one again.
func TestLoadDirReadsOnlyWhatChanged(t *testing.T) {
	dir := skillTree(t, map[string]string{"one/SKILL.md": skillManifest("one"), "two/SKILL.md": skillManifest("two"), "two/a.md": "a"})
	first, _, err := LoadDir(dir)
	if err != nil || len(first) != 2 {
		t.Fatalf("%v %v", first, err)
	}
	later := time.Now().Add(time.Minute)
	p := filepath.Join(dir, "two", "a.md")
	if err := os.WriteFile(p, []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(p, later, later)
	again, _, err := LoadDirContext(context.Background(), dir, first)
	if err != nil || len(again) != 2 {
		t.Fatalf("%v %v", again, err)
	}
	if again[0] != first[0] {
		t.Fatal("the unchanged skill was read again")
	}
	if again[1] == first[1] {
		t.Fatal("the changed skill was not read again")
	}
}

// TestLoadDirCanceled: a read stops when its context ends (a SIGTERM
// during a read of a large tree waited 8.4 s for it).
func TestLoadDirCanceled(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c"} {
		files["s"+n+"/SKILL.md"] = skillManifest("s" + n)
	}
	dir := skillTree(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if loaded, _, err := LoadDirContext(ctx, dir, nil); !errors.Is(err, context.Canceled) || loaded != nil {
		t.Fatalf("a canceled read: %d skills, %v", len(loaded), err)
	}
}
