package server

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// PullConfig is the settings of the tools a lock file in the tools
// directory names (docs/registry-tools.md).
type PullConfig struct {
	// OCI is the registry client's options (--insecure,
	// --registry-timeout, --docker-config, --max-module). Its Timeout
	// also bounds the check at start as a whole.
	OCI oci.Options
	// Interval pulls the tools again this often, following their tags
	// (0: only at start and on Reload).
	Interval time.Duration
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
// subdirectory of the compilation cache, bounded by its size cap.
func newPulledTools(dir string, pc *PullConfig, ec *host.Config, log *slog.Logger) (*pulledTools, error) {
	if _, err := os.Stat(filepath.Join(dir, pull.LockName)); errors.Is(err, fs.ErrNotExist) && len(pull.Installed(dir)) == 0 {
		return nil, nil
	}
	c, err := oci.New(pc.OCI)
	if err != nil {
		return nil, err
	}
	cdir, cleanup, err := pulledCacheDir(ec.CacheDir)
	if err != nil {
		return nil, err
	}
	cache, err := pull.OpenCache(cdir, ec.CacheMaxBytes)
	if err != nil {
		cleanup()
		return nil, err
	}
	return &pulledTools{syncer: &pull.Syncer{Dir: dir, Cache: cache, Source: c, Verify: pull.Verify, Log: log}, cleanup: cleanup, log: log, startBudget: pc.OCI.Timeout}, nil
}

// pulledCacheDir is the blob cache of pulled tools: "oci" inside the
// compilation cache directory cacheDir (a temporary directory, removed by
// cleanup, when that is "-").
func pulledCacheDir(cacheDir string) (dir string, cleanup func(), err error) {
	switch cacheDir {
	case "-":
		d, err := os.MkdirTemp("", "wasmcp-oci-")
		if err != nil {
			return "", nil, err
		}
		return d, func() { os.RemoveAll(d) }, nil
	case "":
		cacheDir = host.DefaultCacheDir()
	}
	return filepath.Join(cacheDir, "oci"), func() {}, nil
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
