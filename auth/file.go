package auth

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// reloading holds what was parsed from a file and parses it again when the
// file changes (its size, modification time or identity: an editor's or a
// deployment's rename counts). The file is looked at, at most once per
// interval, by the request that needs its contents. A file that no longer
// parses is reported and the previous contents kept.
type reloading[T any] struct {
	path     string
	parse    func([]byte) (T, error)
	interval time.Duration
	log      *slog.Logger
	onReload func()

	mu      sync.Mutex
	cur     T
	info    os.FileInfo
	checked time.Time
}

func newReloading[T any](path string, interval time.Duration, log *slog.Logger, parse func([]byte) (T, error)) (*reloading[T], error) {
	if interval <= 0 {
		interval = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	f := &reloading[T]{path: path, parse: parse, interval: interval, log: log}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	v, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", path, err)
	}
	f.cur, f.info, f.checked = v, info, time.Now()
	return f, nil
}

// get returns the current contents, reloading them first when the file
// changed and interval has passed since the last look.
func (f *reloading[T]) get() T {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if now.Sub(f.checked) < f.interval {
		return f.cur
	}
	f.checked = now
	info, err := os.Stat(f.path)
	if err != nil {
		f.log.Error("auth: cannot stat the credentials file; keeping the previous contents", "file", f.path, "err", err)
		return f.cur
	}
	if os.SameFile(info, f.info) && info.Size() == f.info.Size() && info.ModTime().Equal(f.info.ModTime()) {
		return f.cur
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		f.log.Error("auth: cannot read the credentials file; keeping the previous contents", "file", f.path, "err", err)
		return f.cur
	}
	v, err := f.parse(b)
	if err != nil {
		f.log.Error("auth: the credentials file does not parse; keeping the previous contents", "file", f.path, "err", err)
		f.info = info
		return f.cur
	}
	f.cur, f.info = v, info
	if f.onReload != nil {
		f.onReload()
	}
	f.log.Info("auth: credentials file reloaded", "file", f.path)
	return f.cur
}
