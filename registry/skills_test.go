package registry

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// skillsFixture is a registry with an empty tools directory serving a
// skills directory, followed by WatchSkills.
type skillsFixture struct {
	*fixture
	skills string
}

func newSkillsFixture(t *testing.T, opts WatchOptions, setup func(dir string)) *skillsFixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), logs: &syncBuffer{}, changes: make(chan string, 1024)}
	sf := &skillsFixture{fixture: f, skills: t.TempDir()}
	if setup != nil {
		setup(sf.skills)
	}
	log := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var err error
	f.engine, err = host.NewEngine(host.Config{CacheDir: cacheDir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = protocol.NewServer(protocol.Options{Logger: log})
	f.srv.AddListener(&protocol.Listener{Resources: true, Send: func(msg []byte) { f.changes <- string(msg) }})
	f.reg = New(f.dir, f.engine, f.srv, log)
	f.reg.ServeSkills(sf.skills)
	if err := f.reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.reg.WatchSkills(ctx, opts) }()
	f.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchSkills: %v", err)
		}
		f.stop = func() {}
	}
	t.Cleanup(func() {
		f.stop()
		f.reg.Close()
		_ = f.engine.Close(context.Background())
		if t.Failed() {
			t.Logf("logs:\n%s", f.logs)
		}
	})
	return sf
}

func writeSkill(t *testing.T, dir, path, desc string) {
	t.Helper()
	name := filepath.Base(path)
	full := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + name + "\ndescription: " + desc + "\n---\nbody\n"
	if err := os.WriteFile(filepath.Join(full, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

// served lists the catalog's skills as "uri=description".
func (f *skillsFixture) served() string {
	var out []string
	for _, s := range f.srv.Catalog().Skills() {
		out = append(out, s.URI()+"="+s.Description)
	}
	return strings.Join(out, " ")
}

func TestSkillsDirectoryLoadedAndFollowed(t *testing.T) {
	for _, polling := range []bool{false, true} {
		name := "notifications"
		if polling {
			name = "polling"
		}
		t.Run(name, func(t *testing.T) {
			f := newSkillsFixture(t, WatchOptions{Settle: 20 * time.Millisecond, Poll: 50 * time.Millisecond, Polling: polling},
				func(dir string) { writeSkill(t, dir, "alpha", "first") })
			if got := f.served(); got != "skill://alpha/SKILL.md=first" {
				t.Fatalf("after Load: %q", got)
			}
			if !strings.Contains(handle(t, f.srv, `{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://alpha/SKILL.md"}}`), `"name":"alpha"`) {
				t.Fatal("skills/get of a directory skill failed")
			}
			// A new skill in a new group directory (watched once created).
			writeSkill(t, f.skills, "group/beta", "second")
			f.waitFor("beta", func() bool { return strings.Contains(f.served(), "skill://group/beta/SKILL.md=second") })
			f.waitChange("resources")
			// A changed file.
			writeSkill(t, f.skills, "alpha", "first, edited")
			f.waitFor("alpha edited", func() bool { return strings.Contains(f.served(), "skill://alpha/SKILL.md=first, edited") })
			// A bad skill is refused; the others keep serving.
			writeSkill(t, f.skills, "gamma", "third")
			if err := os.WriteFile(filepath.Join(f.skills, "gamma", "SKILL.md"), []byte("---\nname: wrong\ndescription: d\n---\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f.waitFor("gamma refused", func() bool { return strings.Contains(f.logs.String(), "skill refused") })
			// A removed skill goes away.
			if err := os.RemoveAll(filepath.Join(f.skills, "alpha")); err != nil {
				t.Fatal(err)
			}
			f.waitFor("alpha removed", func() bool { return f.served() == "skill://group/beta/SKILL.md=second" })
		})
	}
}

func TestSkillsDirectoryReload(t *testing.T) {
	f := newSkillsFixture(t, WatchOptions{Polling: true, Poll: time.Hour}, nil)
	if got := f.served(); got != "" {
		t.Fatalf("empty directory serves %q", got)
	}
	writeSkill(t, f.skills, "alpha", "first")
	if err := f.reg.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.served(); got != "skill://alpha/SKILL.md=first" {
		t.Fatalf("after Reload: %q", got)
	}
	// An unreadable directory keeps what was loaded. It goes away in one
	// step (a rename): a scan by the watcher during a RemoveAll could see
	// the directory emptied but still there, which is an empty directory,
	// not a missing one.
	if err := os.Rename(f.skills, f.skills+".gone"); err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.served(); got != "skill://alpha/SKILL.md=first" {
		t.Fatalf("after the directory went away: %q", got)
	}
}
