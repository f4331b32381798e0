package pull_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/pull"
)

// TestPullBoundsNames: a version declaring names past what a lock can
// hold (30,000 prompts of 100 control characters: 3 MB declared, 18 MB
// once TOML escapes them, over the lock's 16 MiB) is refused at its
// describe, saying so, and the lock stays readable: a lock too large to
// read stops every pulled tool of the directory.
func TestPullBoundsNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	src := newMemSource()
	var calls int
	src.publish(t, "v1", version("1", "tool echo"), "", nil)
	if _, err := pull.Pull(context.Background(), namesReq(t, src, dir, "v1", describer(&calls))); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for i := range 30000 {
		names = append(names, fmt.Sprintf("prompt %05d%s", i, strings.Repeat("\x01", 95)))
	}
	src.publish(t, "v2", version("2", names...), "", nil)
	_, err := pull.Pull(context.Background(), namesReq(t, src, dir, "v2", describer(&calls)))
	if _, rerr := pull.ReadLock(dir); rerr != nil {
		t.Fatalf("after pulling a version of 30,000 names (%v) the lock cannot be read: %v", err, rerr)
	}
	if err == nil || !strings.Contains(err.Error(), "names") {
		t.Fatalf("pull: %v, want it refused for its names", err)
	}
}
