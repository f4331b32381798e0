package main

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wasmcp/wasmcp/pull"
)

// pullFlags are serve's flags for the tools its lock file names.
type pullFlags struct {
	ociFlags
	interval time.Duration
}

// pulledTools keeps the tools of the lock file (dir/wasmcp.lock) fetched,
// verified and installed while serve runs; nil when there is no lock.
type pulledTools struct {
	syncer  *pull.Syncer
	cleanup func()
	log     *slog.Logger
	// startBudget bounds the check at start as a whole (--registry-timeout):
	// no module loads before it ends, and a registry answering every request
	// just inside the timeout would otherwise hold the start for every
	// operation of every tool not cached.
	startBudget time.Duration
}

// newPulledTools prepares the pulled tools of dir, when dir has a lock
// file, or tools installed from one (a lock deleted since: they are
// removed, never served unchecked). The blob cache is the oci
// subdirectory of the compilation cache, bounded by --cache-max.
func newPulledTools(dir string, pf *pullFlags, ef *engineFlags, log *slog.Logger) (*pulledTools, error) {
	if _, err := os.Stat(filepath.Join(dir, pull.LockName)); errors.Is(err, fs.ErrNotExist) && len(pull.Installed(dir)) == 0 {
		return nil, nil
	}
	c, err := pf.client()
	if err != nil {
		return nil, err
	}
	cdir, cleanup, err := pulledCacheDir(ef.cacheDir)
	if err != nil {
		return nil, err
	}
	cache, err := pull.OpenCache(cdir, int64(ef.cacheMax))
	if err != nil {
		cleanup()
		return nil, err
	}
	return &pulledTools{syncer: &pull.Syncer{Dir: dir, Cache: cache, Source: c, Verify: pull.Verify, Log: log}, cleanup: cleanup, log: log, startBudget: pf.timeout}, nil
}

// sync runs one Sync (follow: resolve tags again) and reports whether the
// tools directory changed. The check at start (not following) is bounded
// by startBudget as a whole: cached tools are verified and installed
// without the registry anyway, and what could not be fetched in time is
// refused (check=registry) until SIGHUP or the next --pull-interval.
func (p *pulledTools) sync(ctx context.Context, follow bool) bool {
	if p == nil {
		return false
	}
	if !follow && p.startBudget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.startBudget)
		defer cancel()
	}
	t0 := time.Now()
	changed, err := p.syncer.Sync(ctx, follow)
	if err != nil {
		p.log.Error("pulled tools", "err", err)
	}
	p.log.Info("pulled tools checked", "follow_tags", follow, "changed", changed, "took", time.Since(t0).Round(time.Millisecond))
	return changed
}

func (p *pulledTools) close() {
	if p != nil {
		p.cleanup()
	}
}
