package pull_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// TestLockRefuses: tool names differing only in case (one file on a
// case-insensitive filesystem), and an entry whose reference pins one
// digest while its digest field says another, are refused when the lock
// is read, saying which.
func TestLockRefuses(t *testing.T) {
	a, b := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	cases := []struct{ name, lock, want string }{
		{"case", fmt.Sprintf("[[tool]]\nname = \"Echo\"\nreference = \"r.example/t/echo:1\"\ndigest = %q\nsigned = false\n[[tool]]\nname = \"echo\"\nreference = \"r.example/t/echo:2\"\ndigest = %q\nsigned = false\n", a, b),
			`tools "Echo" and "echo" differ only in case`},
		{"two_digests", fmt.Sprintf("[[tool]]\nname = \"echo\"\nreference = \"r.example/t/echo@%s\"\ndigest = %q\nsigned = false\n", a, b),
			"reference r.example/t/echo@" + a + " pins " + a + " but digest is " + b},
		// The Kelvin sign folds to "k" (strings.EqualFold): names are ASCII
		// only, so no two names can fold together but through ASCII case.
		{"unicode_name", fmt.Sprintf("[[tool]]\nname = \"\u212Aelvin\"\nreference = \"r.example/t/k:1\"\ndigest = %q\nsigned = false\n", a),
			"tool name \"\u212aelvin\": want letters, digits"},
		// A time without its zone is no instant: refused, never read as UTC
		// or local time.
		{"time_no_zone", fmt.Sprintf("[[tool]]\nname = \"echo\"\nreference = \"r.example/t/echo:1\"\ndigest = %q\nkey = \"k.pub\"\nkey_not_after = \"2027-06-30T00:00:00\"\n", a),
			`key_not_after "2027-06-30T00:00:00": want an RFC 3339 time`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, pull.LockName), []byte(c.lock), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := pull.ReadLock(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestHandPlacedModule: a module placed by hand in the tools directory
// under a pulled tool's name is neither overwritten nor removed; the
// pulled tool is refused with a log line naming both. Once the file is
// gone the pulled tool installs, and a later run owns its file.
func TestHandPlacedModule(t *testing.T) {
	f := newFake(t, []ocispec.Descriptor{wasmLayer(oci.MediaTypeWasm, module, int64(len(module)))}, map[digest.Digest][]byte{digest.FromBytes(module): module})
	dir := t.TempDir()
	lock := fmt.Sprintf("[[tool]]\nname = \"echo\"\nreference = %q\ndigest = %q\nsigned = false\napproved = []\n", f.ref(), digest.FromBytes(f.manifest))
	if err := os.WriteFile(filepath.Join(dir, pull.LockName), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	hand := []byte("\x00asm\x01\x00\x00\x00 placed by hand")
	wasm := filepath.Join(dir, "echo.wasm")
	if err := os.WriteFile(wasm, hand, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := oci.New(oci.Options{DockerConfig: emptyConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := pull.OpenCache(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	syncer := func() *pull.Syncer {
		return &pull.Syncer{Dir: dir, Cache: cache, Source: c, Verify: pull.Verify, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	}
	s := syncer()
	var told []string
	s.Refused = func(tool, check, reason string, serving bool) {
		told = append(told, fmt.Sprintf("%s %s %v %s", tool, check, serving, reason))
	}
	if _, err := s.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wasm); !bytes.Equal(b, hand) {
		t.Fatalf("the module placed by hand was replaced: %q", b)
	}
	if len(told) != 1 || !strings.HasPrefix(told[0], "echo install false ") || !strings.Contains(told[0], wasm) {
		t.Fatalf("Refused heard %q", told)
	}
	if !strings.Contains(logs.String(), "not installed over a module placed by hand") || !strings.Contains(logs.String(), wasm) || !strings.Contains(logs.String(), "tool=echo") {
		t.Fatalf("log:\n%s", logs.String())
	}
	// The lock now pins a digest the registry lacks: refused, and the
	// file placed by hand is not removed either.
	bad := strings.Replace(lock, digest.FromBytes(f.manifest).String(), "sha256:"+strings.Repeat("0", 64), 1)
	os.WriteFile(filepath.Join(dir, pull.LockName), []byte(bad), 0o644)
	if _, err := syncer().Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wasm); !bytes.Equal(b, hand) {
		t.Fatal("the module placed by hand was removed by a refusal")
	}
	// Gone: the pulled tool installs; a new run (an older version on disk,
	// the marker there) still owns it.
	os.WriteFile(filepath.Join(dir, pull.LockName), []byte(lock), 0o644)
	os.Remove(wasm)
	if _, err := syncer().Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wasm); !bytes.Equal(b, module) {
		t.Fatalf("not installed: %q", b)
	}
	os.WriteFile(wasm, []byte("an older pulled version"), 0o644)
	if _, err := syncer().Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(wasm); !bytes.Equal(b, module) {
		t.Fatalf("a file installed from the lock by a run before was not replaced: %q", b)
	}
}

// installFixture is a tools directory whose lock names one unsigned,
// approved tool "echo" served by a fake registry, and a syncer maker
// (each call a new run of serve) logging into logs.
func installFixture(t *testing.T) (dir, lock string, syncer func() *pull.Syncer, logs *bytes.Buffer) {
	t.Helper()
	f := newFake(t, []ocispec.Descriptor{wasmLayer(oci.MediaTypeWasm, module, int64(len(module)))}, map[digest.Digest][]byte{digest.FromBytes(module): module})
	dir = t.TempDir()
	lock = fmt.Sprintf("[[tool]]\nname = \"echo\"\nreference = %q\ndigest = %q\nsigned = false\napproved = []\n", f.ref(), digest.FromBytes(f.manifest))
	if err := os.WriteFile(filepath.Join(dir, pull.LockName), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := oci.New(oci.Options{DockerConfig: emptyConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := pull.OpenCache(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	logs = &bytes.Buffer{}
	syncer = func() *pull.Syncer {
		return &pull.Syncer{Dir: dir, Cache: cache, Source: c, Verify: pull.Verify, Log: slog.New(slog.NewTextHandler(logs, nil))}
	}
	return dir, lock, syncer, logs
}

// mustInstall syncs with s and checks echo.wasm is the pulled module.
func mustInstall(t *testing.T, s *pull.Syncer, dir string) {
	t.Helper()
	if _, err := s.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "echo.wasm")); !bytes.Equal(b, module) {
		t.Fatalf("not installed: %q", b)
	}
}

// gone checks a pulled tool's files were removed from dir.
func gone(t *testing.T, dir, name string) {
	t.Helper()
	for _, f := range []string{name + ".wasm", "." + name + ".wasmcp-pulled"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is still in the tools directory", f)
		}
	}
}

// TestLockUnreadable: a lock that cannot be read (here an operator
// revoking a key with a typo in revoked_keys) removes every tool
// installed from a lock — the ones this run serves (SIGHUP) and the ones
// a run before installed (a restart) — instead of leaving them served
// unchecked, the revoked one included. A module placed by hand stays.
// Upper-case hex in revoked_keys names the same key (no error).
func TestLockUnreadable(t *testing.T) {
	dir, lock, syncer, _ := installFixture(t)
	hand := filepath.Join(dir, "other.wasm")
	if err := os.WriteFile(hand, module, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := "revoked_keys = [\"sha256:9f86d0\"]\n" + lock
	writeLock := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, pull.LockName), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := syncer()
	mustInstall(t, s, dir)
	writeLock(bad)
	changed, err := s.Sync(context.Background(), true) // SIGHUP
	if err == nil || !strings.Contains(err.Error(), "no pulled tool is served") || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	gone(t, dir, "echo")
	writeLock(lock)
	mustInstall(t, syncer(), dir)
	writeLock(bad)
	if _, err := syncer().Sync(context.Background(), false); err == nil { // a restart
		t.Fatal("an unreadable lock read")
	}
	gone(t, dir, "echo")
	if _, err := os.Stat(hand); err != nil {
		t.Fatalf("a module placed by hand was removed: %v", err)
	}
	upper := "revoked_keys = [\"sha256:" + strings.Repeat("AB", 32) + "\"]\n" + lock
	writeLock(upper)
	l, err := pull.ReadLock(dir)
	if err != nil {
		t.Fatalf("upper-case hex in revoked_keys: %v", err)
	}
	if want := "sha256:" + strings.Repeat("ab", 32); l.Tools[0].RevokedKeys[0] != want {
		t.Fatalf("revoked key %q, want %q", l.Tools[0].RevokedKeys[0], want)
	}
}

// TestRemovedFromLock: a tool removed from the lock while serve was not
// running, or whose lock was deleted, is removed at the next start rather
// than served, unchecked, as if placed by hand.
func TestRemovedFromLock(t *testing.T) {
	dir, lock, syncer, logs := installFixture(t)
	mustInstall(t, syncer(), dir)
	if err := os.WriteFile(filepath.Join(dir, pull.LockName), []byte("# no tools\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := syncer().Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	gone(t, dir, "echo")
	if !strings.Contains(logs.String(), "pulled tool not in the lock; removed") {
		t.Fatalf("log:\n%s", logs.String())
	}
	if err := os.WriteFile(filepath.Join(dir, pull.LockName), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	mustInstall(t, syncer(), dir)
	if got := pull.Installed(dir); len(got) != 1 || got[0] != "echo" {
		t.Fatalf("Installed = %q", got)
	}
	os.Remove(filepath.Join(dir, pull.LockName))
	if _, err := syncer().Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	gone(t, dir, "echo")
}

// TestHandPlacedScript: a script placed by hand, NAME.js or NAME.ts,
// shares NAME.policy.toml with NAME.wasm (the registry loads both, each
// under that one policy). A pulled tool of that name used to overwrite
// the script's policy with its own (or delete it), handing the script
// the grants approved for the pulled module. It is refused like a module
// placed by hand, the script's policy untouched; a script appearing
// beside a pulled tool already installed makes it uninstalled (its
// grants never reach the script); pull refuses the name.
func TestHandPlacedScript(t *testing.T) {
	for _, ext := range []string{".js", ".ts"} {
		t.Run(ext[1:], func(t *testing.T) {
			dir, _, syncer, logs := installFixture(t)
			script := filepath.Join(dir, "echo"+ext)
			pol := filepath.Join(dir, "echo.policy.toml")
			own := []byte("memory = \"32MiB\"\n")
			os.WriteFile(script, []byte("tool('echo', {}, (a) => a)\n"), 0o644)
			os.WriteFile(pol, own, 0o644)
			if _, err := syncer().Sync(context.Background(), false); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(pol); err != nil || !bytes.Equal(b, own) {
				t.Fatalf("the script's policy was replaced: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "echo.wasm")); err == nil {
				t.Fatal("the pulled module was installed beside the script")
			}
			if !strings.Contains(logs.String(), "not installed over a module placed by hand") || !strings.Contains(logs.String(), script) {
				t.Fatalf("log:\n%s", logs.String())
			}
			if err := pull.CheckUnowned(dir, "echo"); err == nil || !strings.Contains(err.Error(), script) {
				t.Fatalf("CheckUnowned: %v", err)
			}
			// Installed first, the script placed after: uninstalled at the
			// next sync.
			os.Remove(script)
			os.Remove(pol)
			s := syncer()
			mustInstall(t, s, dir)
			os.WriteFile(script, []byte("tool('echo', {}, (a) => a)\n"), 0o644)
			if _, err := s.Sync(context.Background(), true); err != nil {
				t.Fatal(err)
			}
			gone(t, dir, "echo")
			if _, err := os.Stat(script); err != nil {
				t.Fatalf("the script was removed: %v", err)
			}
		})
	}
}

// TestLockEditedDuringSync: serve rewrites the lock after a check (the
// signer line, a tag's new digest, a pending version). An operator's edit
// made while that check ran - a key revoked in revoked_keys, say - used
// to be overwritten with the lock as serve read it before the check, which
// a registry can stretch to minutes: the revocation silently lost. Now the
// lock is written only if it is still what the check read; the edit
// stays, and the next check reads it.
func TestLockEditedDuringSync(t *testing.T) {
	f := newFake(t, []ocispec.Descriptor{wasmLayer(oci.MediaTypeWasm, module, int64(len(module)))}, map[digest.Digest][]byte{digest.FromBytes(module): module})
	dir := t.TempDir()
	lockPath := filepath.Join(dir, pull.LockName)
	// signer differs from what the check finds (unsigned): serve rewrites it.
	lock := fmt.Sprintf("[[tool]]\nname = \"echo\"\nreference = %q\ndigest = %q\nsigned = false\napproved = []\nsigner = \"key sha256:%s\"\n",
		f.ref(), digest.FromBytes(f.manifest), strings.Repeat("0", 64))
	if err := os.WriteFile(lockPath, []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := "revoked_keys = [\"sha256:" + strings.Repeat("9", 64) + "\"]\n" + lock
	var once sync.Once
	f.onRequest = func(*http.Request) {
		once.Do(func() {
			if err := os.WriteFile(lockPath, []byte(edited), 0o644); err != nil {
				t.Error(err)
			}
		})
	}
	_, _, syncer, logs := installFixture(t)
	s := syncer()
	s.Dir = dir
	if _, err := s.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(lockPath); string(b) != edited {
		t.Fatalf("the operator's edit made during the check was overwritten:\n%s", b)
	}
	if !strings.Contains(logs.String(), "the lock changed during the check") {
		t.Fatalf("log:\n%s", logs.String())
	}
	// The next check reads the edit and writes its own change.
	f.onRequest = nil
	if _, err := s.Sync(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	l, err := pull.ReadLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.RevokedKeys) != 1 || l.Tools[0].Signer != "" {
		t.Fatalf("lock after the next check: %+v", l)
	}
}
