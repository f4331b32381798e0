package registry

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultSettle is how long a file must go without a change event before
// it is loaded.
const DefaultSettle = 100 * time.Millisecond

// DefaultPoll is the period of the polling fallback.
const DefaultPoll = 2 * time.Second

// WatchOptions tune Watch.
type WatchOptions struct {
	// Settle is how long a module file (or its policy file) must go
	// without a change event before it is loaded; 0 means DefaultSettle.
	// After it, the file is read and its size, modification time and inode
	// checked again before and after compiling; a file that changed
	// meanwhile waits another Settle.
	Settle time.Duration
	// Poll is the period of the polling fallback; 0 means DefaultPoll.
	Poll time.Duration
	// Polling uses the polling fallback even where file notifications
	// work (e.g. for a directory on a network file system, where
	// notifications miss changes made by other machines).
	Polling bool
}

// Watch follows changes to the tools directory until ctx is done: it is
// WatchWith with the default options.
func (r *Registry) Watch(ctx context.Context) error {
	return r.WatchWith(ctx, WatchOptions{})
}

// WatchWith follows changes to the tools directory until ctx is done. It
// watches the directory itself, not its subdirectories, with file system
// notifications (fsnotify); where the platform has none, or the directory
// is removed while watched, it polls instead. Every batch of settled
// changes is loaded off the request path and published as one catalog
// swap. WatchWith returns nil when ctx is done.
func (r *Registry) WatchWith(ctx context.Context, o WatchOptions) error {
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if !o.Polling {
		w, err := fsnotify.NewWatcher()
		if err == nil {
			if err = w.Add(r.dir); err == nil {
				if r.watchEvents(ctx, w, o) {
					return nil
				}
				r.log.Warn("the tools directory was removed or renamed; polling for it", "dir", r.dir, "every", o.Poll)
				return r.poll(ctx, o)
			}
			_ = w.Close()
		}
		r.log.Warn("file notifications unavailable; polling the tools directory", "dir", r.dir, "every", o.Poll, "err", err)
	}
	return r.poll(ctx, o)
}

// watchEvents loads what the watcher reports, each file once it has
// settled. It closes w and returns true when ctx is done, false when the
// directory itself went away.
func (r *Registry) watchEvents(ctx context.Context, w *fsnotify.Watcher, o WatchOptions) bool {
	defer w.Close()
	dir := filepath.Clean(r.dir)
	p := newPendingFiles()
	defer p.timer.Stop()
	// Whatever changed between the initial load and the watch starting
	// is synced after one settle window; unchanged files cost a stat.
	r.resync(p, time.Now().Add(o.Settle))
	// Each batch syncs in a goroutine of its own, so a slow load never
	// holds up the events or the next batch; the files it could not load
	// yet come back on again.
	again := make(chan []string)
	for {
		select {
		case <-ctx.Done():
			return true
		case ev, ok := <-w.Events:
			if !ok {
				return true
			}
			f, gone := r.watchEvent(dir, ev)
			if gone {
				return false
			}
			if f != "" {
				p.at[f] = time.Now().Add(o.Settle)
				p.arm()
			}
		case err, ok := <-w.Errors:
			if !ok {
				return true
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				r.log.Warn("file notifications overflowed; rescanning the tools directory", "dir", r.dir)
				r.resync(p, time.Now().Add(o.Settle))
				continue
			}
			r.log.Warn("watching the tools directory", "dir", r.dir, "err", err)
		case <-p.timer.C:
			if due := p.due(time.Now()); len(due) > 0 {
				go r.syncBatch(ctx, due, again)
			}
			p.arm()
		case files := <-again:
			for _, f := range files {
				if _, ok := p.at[f]; !ok {
					p.at[f] = time.Now().Add(o.Settle)
				}
			}
			p.arm()
		}
	}
}

// watchEvent reads one watcher event: the module file it names (empty
// when it names none in the directory), or gone when the directory
// itself was removed or renamed.
func (r *Registry) watchEvent(dir string, ev fsnotify.Event) (file string, gone bool) {
	if ev.Name == dir || filepath.Clean(ev.Name) == dir {
		return "", ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	}
	if filepath.Dir(ev.Name) != dir {
		return "", false
	}
	f := fileFor(dir, filepath.Base(ev.Name))
	if f != "" {
		r.log.Debug("tools directory event", "file", ev.Name, "op", ev.Op.String())
	}
	return f, false
}

// resync marks every file in the directory, and every loaded one, due at
// at: a file that did not change costs a stat when synced.
func (r *Registry) resync(p *pendingFiles, at time.Time) {
	files, err := r.scan()
	if err != nil {
		r.log.Error("rescanning the tools directory", "dir", r.dir, "err", err)
	}
	for _, f := range r.withLoaded(files) {
		p.at[f] = at
	}
	p.arm()
}

// syncBatch syncs files and hands those it could not load yet (changed
// while read, or busy) back on again.
func (r *Registry) syncBatch(ctx context.Context, files []string, again chan<- []string) {
	retry, busy := r.sync(ctx, files)
	if files := append(retry, busy...); len(files) > 0 {
		select {
		case again <- files:
		case <-ctx.Done():
		}
	}
}

// pendingFiles is the files waiting to be synced, each with when it may
// be, and the timer that fires when the first is due.
type pendingFiles struct {
	at    map[string]time.Time
	timer *time.Timer
}

// newPendingFiles returns an empty set with its timer stopped.
func newPendingFiles() *pendingFiles {
	p := &pendingFiles{at: map[string]time.Time{}, timer: time.NewTimer(time.Hour)}
	p.timer.Stop()
	return p
}

// arm sets the timer for the first file due; with none it leaves it.
func (p *pendingFiles) arm() {
	if len(p.at) == 0 {
		return
	}
	var first time.Time
	for _, at := range p.at {
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	p.timer.Reset(max(time.Until(first), 0))
}

// due removes and returns, sorted, the files due at now.
func (p *pendingFiles) due(now time.Time) []string {
	var due []string
	for f, at := range p.at {
		if !at.After(now) {
			due = append(due, f)
			delete(p.at, f)
		}
	}
	slices.Sort(due)
	return due
}

// poll is the fallback without notifications: every period it stats the
// directory's module and policy files and syncs those that changed and
// then stayed unchanged for one more period (so a file being written is
// not loaded half-way), and those that disappeared.
func (r *Registry) poll(ctx context.Context, o WatchOptions) error {
	t := time.NewTicker(o.Poll)
	defer t.Stop()
	prev := map[string][2]fileStat{}
	failing := false
	for {
		files, err := r.scan()
		switch {
		case err != nil && !failing:
			r.log.Error("polling the tools directory; the loaded modules keep serving", "dir", r.dir, "err", err)
			failing = true
		case err == nil:
			if failing {
				r.log.Info("the tools directory is readable again", "dir", r.dir)
				failing = false
			}
			cur := make(map[string][2]fileStat, len(files))
			var due []string
			for _, f := range r.withLoaded(files) {
				path := filepath.Join(r.dir, f)
				ws, werr := statFile(path)
				ps, _ := statFile(PolicyFile(path))
				s := [2]fileStat{ws, ps}
				if werr != nil {
					due = append(due, f) // gone: remove at once
					continue
				}
				cur[f] = s
				if p, ok := prev[f]; ok && p == s {
					due = append(due, f) // settled; unchanged files cost a stat
				}
			}
			prev = cur
			if len(due) > 0 {
				// Not waited for: a file still loading at the next
				// period is skipped then and synced again after.
				go r.sync(ctx, due)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
