package pull_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/pull/signing"
)

// chdir makes dir the working directory for the rest of the test.
func chdir(t *testing.T, dir string) {
	t.Helper()
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chdir(old) })
}

// TestPullPathsFromWorkingDir: `cd work && wasmcp pull REF -o tools --key
// op.pub` reads work/op.pub, never tools/op.pub — there another key was
// planted, and what it signed was accepted — and creates tools when it is
// missing (README's three-line story).
func TestPullPathsFromWorkingDir(t *testing.T) {
	work := t.TempDir()
	chdir(t, work)
	src := newMemSource()
	op := keyPair(t, filepath.Join(work, "op"))
	src.publish(t, "v1", "1", "", op)
	if _, err := pull.Pull(context.Background(), pullReq(t, src, "tools", "v1", pull.Signer{Key: "op.pub"})); err != nil {
		t.Fatalf("pull -o tools (missing) --key op.pub: %v", err)
	}
	lock, err := pull.ReadLock("tools")
	if err != nil {
		t.Fatal(err)
	}
	if k := lock.Find("echo").Key; k != filepath.Join(work, "op.pub") {
		t.Errorf("the lock records key = %q, want %q (the file named, from the working directory)", k, filepath.Join(work, "op.pub"))
	}

	// A key planted as tools/op.pub signs v2: refused, since the key
	// named is work/op.pub.
	evil := keyPair(t, filepath.Join(work, "tools", "op"))
	src.publish(t, "v2", "2", "", evil)
	if _, err := pull.Pull(context.Background(), pullReq(t, src, "tools", "v2", pull.Signer{Key: "op.pub"})); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Errorf("a version signed by the key planted in tools/: %v, want a signature refusal", err)
	}

	// A key inside the tools directory is recorded relative to it, as the
	// lock's paths are.
	if _, err := pull.Pull(context.Background(), pullReq(t, src, "tools", "v2", pull.Signer{Key: "tools/op.pub"})); err != nil {
		t.Fatalf("pull --key tools/op.pub: %v", err)
	}
	lock, _ = pull.ReadLock("tools")
	if k := lock.Find("echo").Key; k != "op.pub" {
		t.Errorf("a key inside the tools directory is recorded as %q, want op.pub", k)
	}
}

// TestRepullKeepsKeyWindow: a re-pull naming the key the entry already
// has keeps the window the operator set for it (key_not_after retired
// the key; erasing it trusted the key again). Naming another key drops
// the window, which belonged to the old key.
func TestRepullKeepsKeyWindow(t *testing.T) {
	work := t.TempDir()
	chdir(t, work)
	src := newMemSource()
	op := keyPair(t, filepath.Join(work, "op"))
	src.publish(t, "v1", "1", "", op)
	ctx := context.Background()
	if _, err := pull.Pull(ctx, pullReq(t, src, "tools", "v1", pull.Signer{Key: "op.pub"})); err != nil {
		t.Fatal(err)
	}
	lock, err := pull.ReadLock("tools")
	if err != nil {
		t.Fatal(err)
	}
	e := lock.Find("echo")
	e.KeyNotBefore, e.KeyNotAfter = "2020-01-01T00:00:00Z", "2099-06-30T00:00:00Z"
	if err := pull.WriteLock("tools", lock); err != nil {
		t.Fatal(err)
	}
	// The same file, and a copy of the same key elsewhere.
	if err := os.WriteFile("copy.pub", must(os.ReadFile("op.pub")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"op.pub", "copy.pub"} {
		if _, err := pull.Pull(ctx, pullReq(t, src, "tools", "v1", pull.Signer{Key: key})); err != nil {
			t.Fatal(err)
		}
		lock, _ = pull.ReadLock("tools")
		if e := lock.Find("echo"); e.KeyNotAfter != "2099-06-30T00:00:00Z" || e.KeyNotBefore != "2020-01-01T00:00:00Z" {
			t.Errorf("re-pull --key %s: key_not_before %q, key_not_after %q: the operator's window was dropped", key, e.KeyNotBefore, e.KeyNotAfter)
		}
	}
	other := keyPair(t, filepath.Join(work, "other"))
	src.publish(t, "v2", "2", "", other)
	if _, err := pull.Pull(ctx, pullReq(t, src, "tools", "v2", pull.Signer{Key: "other.pub"})); err != nil {
		t.Fatal(err)
	}
	lock, _ = pull.ReadLock("tools")
	if e := lock.Find("echo"); e.KeyNotAfter != "" {
		t.Errorf("another key kept the old key's key_not_after %q", e.KeyNotAfter)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestPullDropsAccess: an update whose policy drops the approved access
// table (or has no policy at all any more) lets every caller in: it is
// pending approval, never "nothing to approve".
func TestPullDropsAccess(t *testing.T) {
	work := t.TempDir()
	src := newMemSource()
	src.publish(t, "v1", "1", "[access]\nscopes = [\"admin\"]\n", nil)
	ctx := context.Background()
	dir := filepath.Join(work, "tools")
	unsigned := pull.Signer{Unsigned: true}
	if _, err := pull.Pull(ctx, pullReq(t, src, dir, "v1", unsigned)); err != nil {
		t.Fatal(err)
	}
	if _, err := pull.Approve(dir, "echo", ""); err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{"", "timeout = \"5s\"\n"} {
		v := "2" + policy
		src.publish(t, "v2", v, policy, nil)
		p, err := pull.Pull(ctx, pullReq(t, src, dir, "v2", unsigned))
		if err != nil {
			t.Fatal(err)
		}
		if p.Outcome != pull.Pending || len(p.Beyond) == 0 {
			t.Errorf("an update dropping [access] (policy %q): outcome %v, beyond %v; want pending", policy, p.Outcome, p.Beyond)
		}
	}
}

// TestRollbackRefused: a registry moving a tag back to a version the lock
// replaced (a rollback to an older signed version) is refused, by pull
// and by serve following the tag, unless the operator allows it
// (--allow-downgrade, or allow_downgrade in the lock).
func TestRollbackRefused(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "tools")
	src := newMemSource()
	ctx := context.Background()
	unsigned := pull.Signer{Unsigned: true}
	d1 := src.publish(t, "v", "1", "", nil)
	if _, err := pull.Pull(ctx, pullReq(t, src, dir, "v", unsigned)); err != nil {
		t.Fatal(err)
	}
	d2 := src.publish(t, "v", "2", "", nil)
	if _, err := pull.Pull(ctx, pullReq(t, src, dir, "v", pull.Signer{})); err != nil {
		t.Fatal(err)
	}
	src.tags["v"] = d1 // the registry moves the tag back
	_, err := pull.Pull(ctx, pullReq(t, src, dir, "v", pull.Signer{}))
	if !errors.Is(err, pull.ErrRollback) {
		t.Errorf("pull of the tag moved back: %v, want a rollback refusal", err)
	}

	// serve, following the tag, keeps d2.
	cache, err := pull.OpenCache(filepath.Join(work, "cache"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s := &pull.Syncer{Dir: dir, Cache: cache, Source: src, Verify: pull.Verify, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	if _, err := s.Sync(ctx, true); err != nil {
		t.Fatal(err)
	}
	lock, _ := pull.ReadLock(dir)
	if got := lock.Find("echo").Digest; got != d2 {
		t.Errorf("serve following the tag moved the lock back to %s, want %s kept", got, d2)
	}
	if !strings.Contains(logs.String(), "check=rollback") {
		t.Errorf("serve's log does not name the rollback:\n%s", logs.String())
	}

	// The operator allows it.
	r := pullReq(t, src, dir, "v", pull.Signer{})
	r.AllowDowngrade = true
	if _, err := pull.Pull(ctx, r); err != nil {
		t.Fatalf("pull --allow-downgrade: %v", err)
	}
	lock, _ = pull.ReadLock(dir)
	if e := lock.Find("echo"); e.Digest != d1 || len(e.Replaced) != 1 || e.Replaced[0] != d2 {
		t.Errorf("after --allow-downgrade: digest %s, replaced %v; want %s, [%s]", e.Digest, e.Replaced, d1, d2)
	}
}

// TestSignatureBoundToRepository: a registry copying another tool signed
// by the same key, with its signature, under this tool's tag is refused:
// wasmcp push signs the repository with the digest, and pull checks it.
// A key signature naming no repository (an older bundle, a bare ECDSA
// message signature) is refused too: it could come from any tool.
func TestSignatureBoundToRepository(t *testing.T) {
	work := t.TempDir()
	chdir(t, work)
	src := newMemSource()
	op := keyPair(t, filepath.Join(work, "op"))
	ctx := context.Background()
	bundleFor := func(d, repo string) []byte {
		b, err := signing.SignFor(d, repo, op)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The tool "other", signed for its own repository, copied under echo's tag.
	d := src.publish(t, "copied", "other", "", nil)
	src.sigs[d] = []oci.Signature{{Bundle: bundleFor(d, "r.example/tools/other"), Source: "referrer"}}
	_, err := pull.Pull(ctx, pullReq(t, src, "tools", "copied", pull.Signer{Key: "op.pub"}))
	if err == nil || !strings.Contains(err.Error(), "wrong repository") || !strings.Contains(err.Error(), "r.example/tools/other") {
		t.Errorf("another tool's signature copied under this tag: %v, want refused (wrong repository)", err)
	}
	// Unbound: ECDSA message signature, and a statement naming nothing.
	d = src.publish(t, "unbound", "unbound", "", nil)
	src.sigs[d] = []oci.Signature{{Bundle: bundleFor(d, ""), Source: "referrer"}}
	if _, err := pull.Pull(ctx, pullReq(t, src, "tools", "unbound", pull.Signer{Key: "op.pub"})); err == nil || !strings.Contains(err.Error(), "names no repository") {
		t.Errorf("a key signature naming no repository: %v, want refused", err)
	}
	// Its own signature verifies.
	d = src.publish(t, "own", "own", "", nil)
	src.sigs[d] = []oci.Signature{{Bundle: bundleFor(d, "r.example/tools/echo"), Source: "referrer"}}
	if _, err := pull.Pull(ctx, pullReq(t, src, "tools", "own", pull.Signer{Key: "op.pub"})); err != nil {
		t.Errorf("the tool's own signature: %v", err)
	}
}
