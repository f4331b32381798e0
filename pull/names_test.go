package pull_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/pull"
)

// version is the version string of a memSource module that declares
// names: the describer below reads them back from the module's bytes
// (after the 8-byte header: "VERSION|KIND NAME|KIND NAME…").
func version(v string, names ...string) string {
	return strings.Join(append([]string{v}, names...), "|")
}

// describer is a pull.Describer over memSource modules; calls counts its
// runs. A module whose version is "hang" fails as a describe past its
// deadline would.
func describer(calls *int) pull.Describer {
	return func(_ context.Context, _ string, module, _ []byte) ([]string, error) {
		*calls++
		parts := strings.Split(string(module[8:]), "|")
		if parts[0] == "hang" {
			return nil, errors.New("describe: the guest ran past its deadline of 5s")
		}
		var tools, res, tmpl, prompts []string
		for _, p := range parts[1:] {
			kind, name, _ := strings.Cut(p, " ")
			switch kind {
			case "tool":
				tools = append(tools, name)
			case "resource":
				res = append(res, name)
			case "template":
				tmpl = append(tmpl, name)
			case "prompt":
				prompts = append(prompts, name)
			}
		}
		return pull.NameLines(tools, res, tmpl, prompts), nil
	}
}

func namesReq(t *testing.T, src *memSource, dir, tag string, d pull.Describer) pull.Request {
	r := pullReq(t, src, dir, tag, pull.Signer{Unsigned: true})
	r.Describe = d
	return r
}

// TestPullListsNames: pull names every tool, resource, template and
// prompt the version declares; the listing escapes them (a name is the
// publisher's text: ESC [8m would hide what follows on a terminal); the
// lock records them as approved for a version asking for nothing.
func TestPullListsNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	src := newMemSource()
	var calls int
	src.publish(t, "v1", version("1", "tool echo", "resource file:///\x1b[8mhidden", "template file:///{path}", "prompt greet"), "", nil)
	p, err := pull.Pull(context.Background(), namesReq(t, src, dir, "v1", describer(&calls)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"prompt greet", "resource file:///\x1b[8mhidden", "template file:///{path}", "tool echo"}
	if !slices.Equal(p.Fetched.Names, want) {
		t.Errorf("names %q, want %q", p.Fetched.Names, want)
	}
	out := pull.DescribeNames(p.Fetched.Names, nil)
	if strings.Contains(out, "\x1b") || !strings.Contains(out, `file:///\x1b[8mhidden`) {
		t.Errorf("the listing does not escape the names:\n%s", out)
	}
	for _, w := range []string{"tool:     echo\n", "prompt:   greet\n", "template: file:///{path}\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("the listing lacks %q:\n%s", w, out)
		}
	}
	lock, _ := pull.ReadLock(dir)
	if e := lock.Find("echo"); p.Outcome != pull.NothingToApprove || e.Names == nil || !slices.Equal(*e.Names, want) {
		t.Errorf("outcome %v, lock names %v; want nothing to approve, names %q", p.Outcome, e.Names, want)
	}
}

// TestUpdateNamesAskForMore: an update adding a name, or renaming one,
// asks for more (pending, with the new names), like a new grant; approve
// records the approved version's names; an update dropping a name asks
// for less and is recorded at once. Serve following the tag does the
// same: the pinned version keeps serving until the approval.
func TestUpdateNamesAskForMore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	src := newMemSource()
	var calls int
	d := describer(&calls)
	ctx := context.Background()
	d1 := src.publish(t, "v", version("1", "tool echo", "tool upper"), "", nil)
	if _, err := pull.Pull(ctx, namesReq(t, src, dir, "v", d)); err != nil {
		t.Fatal(err)
	}
	// Renamed: upper → small_hello.
	d2 := src.publish(t, "v", version("2", "tool echo", "tool small_hello"), "", nil)
	p, err := pull.Pull(ctx, namesReq(t, src, dir, "v", d))
	if err != nil {
		t.Fatal(err)
	}
	if p.Outcome != pull.Pending || !slices.Equal(p.NewNames, []string{"tool small_hello"}) {
		t.Fatalf("a renamed tool: outcome %v, new names %q; want pending, [tool small_hello]", p.Outcome, p.NewNames)
	}
	lock, _ := pull.ReadLock(dir)
	if e := lock.Find("echo"); e.Digest != d1 || e.PendingDigest != d2 || e.PendingNames == nil || len(*e.PendingNames) != 2 {
		t.Fatalf("lock after the renaming pull: %+v", e)
	}
	a, err := pull.Approve(dir, "echo", d2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.NewNames, []string{"tool small_hello"}) || !slices.Equal(*a.Tool.Names, []string{"tool echo", "tool small_hello"}) || a.Tool.Digest != d2 {
		t.Errorf("approve: new %q, names %v, digest %s", a.NewNames, a.Tool.Names, a.Tool.Digest)
	}
	// Dropped: less.
	d3 := src.publish(t, "v", version("3", "tool echo"), "", nil)
	if p, err = pull.Pull(ctx, namesReq(t, src, dir, "v", d)); err != nil || p.Outcome != pull.Within {
		t.Fatalf("an update dropping a name: %v, outcome %v; want within", err, p)
	}

	// serve following the tag: a version adding a prompt is pending, the
	// pinned one keeps serving; then one dropping it again is installed.
	cache, err := pull.OpenCache(filepath.Join(t.TempDir(), "cache"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s := &pull.Syncer{Dir: dir, Cache: cache, Source: src, Verify: pull.Verify, Describe: d, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	d4 := src.publish(t, "v", version("4", "tool echo", "prompt \x1b]0;owned\x07"), "", nil)
	if _, err := s.Sync(ctx, true); err != nil {
		t.Fatal(err)
	}
	lock, _ = pull.ReadLock(dir)
	if e := lock.Find("echo"); e.Digest != d3 || e.PendingDigest != d4 {
		t.Errorf("serve following a tag to a version with a new prompt: digest %s pending %s; want %s kept, %s pending", e.Digest, e.PendingDigest, d3, d4)
	}
	if l := logs.String(); !strings.Contains(l, `new_names="prompt \\x1b]0;owned\\x07"`) || strings.Contains(l, "\x1b") {
		t.Errorf("the log does not name the new prompt, escaped:\n%s", l)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "echo.wasm")); !bytes.HasSuffix(b, []byte(version("3", "tool echo"))) {
		t.Errorf("the pinned version is not the one served: %q", b)
	}
	d5 := src.publish(t, "v", version("5"), "", nil)
	if _, err := s.Sync(ctx, true); err != nil {
		t.Fatal(err)
	}
	lock, _ = pull.ReadLock(dir)
	if e := lock.Find("echo"); e.Digest != d5 || e.PendingDigest != "" {
		t.Errorf("serve following a tag to a version dropping every name: digest %s pending %s; want %s, none", e.Digest, e.PendingDigest, d5)
	}
}

// TestOldLockNames: a lock written before names were recorded approves
// the names of its pinned version when first seen — by serve (the lock
// gains them) and by a re-pull (which describes the pinned version) —
// so an update adding a name is still pending, never taken as approved.
func TestOldLockNames(t *testing.T) {
	ctx := context.Background()
	var calls int
	d := describer(&calls)
	for _, by := range []string{"serve", "pull"} {
		t.Run(by, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tools")
			src := newMemSource()
			d1 := src.publish(t, "v", version("1", "tool echo"), "", nil)
			if _, err := pull.Pull(ctx, pullReq(t, src, dir, "v", pull.Signer{Unsigned: true})); err != nil { // no describer: an old pull
				t.Fatal(err)
			}
			lock, _ := pull.ReadLock(dir)
			if lock.Find("echo").Names != nil {
				t.Fatal("names recorded without a describer")
			}
			d2 := src.publish(t, "v", version("2", "tool echo", "tool extra"), "", nil)
			var e *pull.Tool
			if by == "serve" {
				cache, _ := pull.OpenCache(filepath.Join(t.TempDir(), "cache"), 0)
				s := &pull.Syncer{Dir: dir, Cache: cache, Source: src, Verify: pull.Verify, Describe: d}
				if _, err := s.Sync(ctx, true); err != nil {
					t.Fatal(err)
				}
			} else {
				p, err := pull.Pull(ctx, namesReq(t, src, dir, "v", d))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(p.NewNames, []string{"tool extra"}) {
					t.Errorf("new names %q, want [tool extra]", p.NewNames)
				}
			}
			lock, _ = pull.ReadLock(dir)
			e = lock.Find("echo")
			if e.Names == nil || !slices.Equal(*e.Names, []string{"tool echo"}) {
				t.Errorf("names of the pinned version not approved on first sight: %v", e.Names)
			}
			if e.Digest != d1 || e.PendingDigest != d2 {
				t.Errorf("an update adding a name to an old lock: digest %s pending %s; want %s kept, %s pending", e.Digest, e.PendingDigest, d1, d2)
			}
		})
	}
}

// TestPullCollision: a version declaring a name a module of the tools
// directory declares is refused before anything is written, naming the
// name and the file, unless the operator allows it; a describe that
// fails (a hostile module hanging) refuses the pull too.
func TestPullCollision(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	src := newMemSource()
	var calls int
	ctx := context.Background()
	src.publish(t, "v", version("1", "tool small_hello", "tool a\x1b[2J"), "", nil)
	small := filepath.Join(dir, "small.wasm")
	r := namesReq(t, src, dir, "v", describer(&calls))
	r.Taken = func(_ context.Context, name string) (map[string]string, error) {
		if name != "echo" {
			t.Errorf("Taken asked to leave out %q, want echo", name)
		}
		return map[string]string{"tool small_hello": small, "tool a\x1b[2J": small}, nil
	}
	_, err := pull.Pull(ctx, r)
	var ce *pull.CollisionError
	if !errors.As(err, &ce) || len(ce.Collisions) != 2 {
		t.Fatalf("pull of a module declaring a served name: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "tool small_hello is declared by "+small) || strings.Contains(msg, "\x1b") || !strings.Contains(msg, "--allow-collision") {
		t.Errorf("the refusal does not name the name and the file, escaped:\n%s", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, pull.LockName)); err == nil {
		t.Error("a refused pull wrote the lock")
	}
	r.AllowCollision = true
	p, err := pull.Pull(ctx, r)
	if err != nil || len(p.Collisions) != 2 {
		t.Fatalf("pull --allow-collision: %v", err)
	}

	src.publish(t, "h", version("hang"), "", nil)
	_, err = pull.Pull(ctx, namesReq(t, src, filepath.Join(t.TempDir(), "t2"), "h", describer(&calls)))
	var chk *pull.CheckError
	if !errors.As(err, &chk) || chk.Check != pull.CheckDescribe {
		t.Errorf("pull of a module whose describe fails: %v, want a describe refusal", err)
	}
}
