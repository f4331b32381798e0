package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadStateKey(t *testing.T) {
	if k, err := readStateKey(""); k != nil || err != nil {
		t.Fatalf("no file: %q %v", k, err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("  "+strings.Repeat("k", 40)+"\n"), 0o600)
	if k, err := readStateKey(good); err != nil || string(k) != strings.Repeat("k", 40) {
		t.Fatalf("good key: %q %v", k, err)
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("too short\n"), 0o600)
	if _, err := readStateKey(short); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("short key: %v", err)
	}
	if _, err := readStateKey(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing file accepted")
	}
}
