package registry

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wasmcp/wasmcp/skills"
)

// skillsState is the registry's skills directory and what it last loaded
// from it; guarded by syncMu, except loaded, which publish reads under mu.
type skillsState struct {
	dir    string
	fp     [32]byte // fingerprint of the tree when it was last read
	read   bool     // the directory was read at least once
	loaded []*skills.Skill
}

// ServeSkills makes the registry serve the Agent Skills of dir (package
// skills: every subdirectory holding a SKILL.md) beside its modules'; call
// it before Load. Load and Reload read the directory, WatchSkills follows
// it. The directory's skills keep their URIs against skills modules ship.
func (r *Registry) ServeSkills(dir string) {
	r.syncMu.Lock()
	r.skills.dir = dir
	r.syncMu.Unlock()
}

// Skills returns the skills last loaded from the skills directory.
func (r *Registry) Skills() []*skills.Skill {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skills.loaded
}

// syncSkills reads the skills directory again if anything in it changed,
// and publishes a catalog if one was published before (the first publish
// happens in sync). A skill that breaks a rule is logged and left out; if
// the directory cannot be read, the skills loaded before keep serving.
//
// Only the skills whose files changed are read again (skills.LoadDirContext
// keeps the others), and ctx ending stops the read: the skills loaded
// before keep serving.
func (r *Registry) syncSkills(ctx context.Context) {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	dir := r.skills.dir
	if dir == "" {
		return
	}
	// The fingerprint is taken before reading, so a change made while
	// reading shows as a change at the next look.
	fp, err := skills.Fingerprint(dir)
	if err != nil {
		r.log.Error("reading the skills directory; the skills loaded before keep serving", "dir", dir, "err", err)
		return
	}
	if r.skills.read && fp == r.skills.fp {
		return
	}
	loaded, refused, err := skills.LoadDirContext(ctx, dir, r.skills.loaded)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		r.log.Error("reading the skills directory; the skills loaded before keep serving", "dir", dir, "err", err)
		return
	}
	for _, e := range refused {
		r.log.Error("skill refused", "dir", dir, "reason", e.Error())
	}
	r.mu.Lock()
	r.skills.loaded = loaded
	r.mu.Unlock()
	r.skills.fp, r.skills.read = fp, true
	r.log.Info("skills loaded", "dir", dir, "skills", len(loaded), "refused", len(refused))
	if r.published.Load() {
		r.publish()
	}
}

// WatchSkills follows the skills directory until ctx is done (nothing to
// do without ServeSkills): file system notifications on the directory and
// every subdirectory, each batch loaded once it has settled for
// o.Settle; polling every o.Poll where notifications are unavailable or
// o.Polling is set. A change reloads the whole directory and publishes one
// catalog.
func (r *Registry) WatchSkills(ctx context.Context, o WatchOptions) error {
	r.syncMu.Lock()
	dir := r.skills.dir
	r.syncMu.Unlock()
	if dir == "" {
		return nil
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	var w *fsnotify.Watcher
	if !o.Polling {
		var err error
		if w, err = fsnotify.NewWatcher(); err == nil {
			defer w.Close()
			events, errs = w.Events, w.Errors
			watchDirs(w, dir)
		} else {
			r.log.Warn("file notifications unavailable; polling the skills directory", "dir", dir, "every", o.Poll, "err", err)
		}
	}
	var tick <-chan time.Time
	if w == nil {
		t := time.NewTicker(o.Poll)
		defer t.Stop()
		tick = t.C
	}
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	r.syncSkills(ctx) // whatever changed before the watch began
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			r.log.Debug("skills directory event", "file", ev.Name, "op", ev.Op.String())
			settle.Reset(o.Settle)
		case err, ok := <-errs:
			if !ok {
				return nil
			}
			r.log.Warn("watching the skills directory", "dir", dir, "err", err)
			settle.Reset(o.Settle)
		case <-settle.C:
			watchDirs(w, dir) // directories created since
			r.syncSkills(ctx)
		case <-tick:
			r.syncSkills(ctx)
		}
	}
}

// watchDirs adds dir and its subdirectories to w (adding one twice is a
// no-op; removed ones drop out by themselves).
func watchDirs(w *fsnotify.Watcher, dir string) {
	if w == nil {
		return
	}
	for _, d := range skills.Dirs(filepath.Clean(dir)) {
		_ = w.Add(d)
	}
}
