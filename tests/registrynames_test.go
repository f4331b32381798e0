package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRegistryPullNames: wasmcp pull lists every name the module declares
// (tools, resources, prompts), describing it as serve would, and records
// them in the lock; a pull of a module declaring names a hand-placed
// module of the tools directory serves is told which name and which file
// and installs nothing (exit non-zero), unless --allow-collision.
func TestRegistryPullNames(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, false)
	e.push(t, "v1", "", "tools/reload:v1")
	out := e.run(t, true, "pull", e.reg.Addr+"/tools/reload:v1", "-o", e.tools, "--unsigned", "--cache-dir", e.cache)
	for _, w := range []string{"it declares:", "tool:     reload_version\n", "tool:     reload_slow\n", "resource: reload://version\n", "prompt:   reload_prompt\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("pull output lacks %q:\n%s", w, out)
		}
	}
	lock, _ := os.ReadFile(filepath.Join(e.tools, "wasmcp.lock"))
	if !strings.Contains(string(lock), `names = ["prompt reload_prompt", "resource reload://version", "tool reload_slow", "tool reload_version"]`) {
		t.Errorf("the lock does not record the names:\n%s", lock)
	}

	// A hand-placed module serving the same names.
	dir := t.TempDir()
	hand := filepath.Join(dir, "hand.wasm")
	deployFile(t, dir, "hand.wasm", e.v1)
	out = e.run(t, false, "pull", e.reg.Addr+"/tools/reload:v1", "-o", dir, "--unsigned", "--cache-dir", e.cache)
	if !strings.Contains(out, "tool reload_version is declared by "+hand) || !strings.Contains(out, "nothing installed") {
		t.Errorf("a pull colliding with a hand-placed module:\n%s", out)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("a refused pull wrote into the tools directory: %v", ents)
	}
	out = e.run(t, true, "pull", e.reg.Addr+"/tools/reload:v1", "-o", dir, "--unsigned", "--cache-dir", e.cache, "--allow-collision")
	if !strings.Contains(out, "COLLISION (--allow-collision): tool reload_version is declared by "+hand+" too") {
		t.Errorf("pull --allow-collision:\n%s", out)
	}
}

// TestRegistryUpdateNewName: serve following a tag (--pull-interval) to
// a version declaring a name not approved (here small_hello, and the
// others dropped) records it as pending, with its names, and keeps the
// pinned version serving until wasmcp approve, which lists the new name.
func TestRegistryUpdateNewName(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, false)
	e.push(t, "v1", "", "tools/reload:stable")
	e.run(t, true, "pull", e.reg.Addr+"/tools/reload:stable", "-o", e.tools, "--unsigned", "--cache-dir", e.cache)
	s := e.serve(t, "--pull-interval", "300ms", "--watch=false")
	c := newStdioClient(t, s)
	if got := callVersion(t, c); !strings.Contains(got, "version v1") {
		t.Fatalf("served: %s", got)
	}
	small, err := filepath.Abs("testdata/small/small.wasm")
	if err != nil {
		t.Fatal(err)
	}
	out := e.run(t, true, "push", small, e.reg.Addr+"/tools/reload:stable")
	m := pushedDigest.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("push printed no digest: %s", out)
	}
	deadline := time.Now().Add(30 * time.Second)
	var lock []byte
	for !strings.Contains(string(lock), `pending_digest = "`+m[1]+`"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the update declaring small_hello is not pending:\n%s\n%s", lock, s.Stderr)
		}
		time.Sleep(100 * time.Millisecond)
		lock, _ = os.ReadFile(filepath.Join(e.tools, "wasmcp.lock"))
	}
	if !strings.Contains(string(lock), `pending_names = ["tool small_hello"]`) {
		t.Errorf("the pending version's names are not recorded:\n%s", lock)
	}
	if got := callVersion(t, c); !strings.Contains(got, "version v1") {
		t.Fatalf("the pinned version stopped serving: %s", got)
	}
	if !strings.Contains(s.Stderr.String(), `new_names="tool small_hello"`) {
		t.Errorf("the log does not name the new name:\n%s", s.Stderr)
	}
	out = e.run(t, true, "approve", "reload", "-o", e.tools)
	if !strings.Contains(out, "tool:     small_hello   NEW: not approved before") {
		t.Errorf("approve does not list the new name:\n%s", out)
	}
}
