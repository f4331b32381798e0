package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/internal/privdir"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/replica"
	"github.com/wasmcp/wasmcp/tasks"
	"github.com/wasmcp/wasmcp/tasks/boltstore"
)

// taskFlags are serve's flags for MCP tasks.
type taskFlags struct {
	dataDir      string
	inlineMS     int
	ttl, maxTTL  time.Duration
	pollInterval time.Duration
	maxTasks     int
	maxPerClient int
	sweep        time.Duration
	store        string
	lease        time.Duration
	// redis is the shared store when --store names one (set by manager).
	redis *replica.Redis
	// caps on stored results, MiB
	maxResult, maxStored, maxStoredPerClient int64
}

func (f *taskFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dataDir, "data-dir", "", `directory of the task store, so that task records and results survive a restart (default `+defaultDataDir()+`, one file per tools directory; "-" keeps tasks in memory)`)
	fs.IntVar(&f.inlineMS, "task-inline-ms", int(protocol.DefaultTaskInline/time.Millisecond), "how long (ms) a 2026-07-28 call of a task-capable tool runs inline before it becomes a task")
	fs.DurationVar(&f.ttl, "task-ttl", tasks.DefaultTTL, "how long a task and its result are kept, from its creation, when the client asks for no TTL")
	fs.DurationVar(&f.maxTTL, "task-max-ttl", tasks.DefaultMaxTTL, "the longest TTL a client may ask for")
	fs.DurationVar(&f.pollInterval, "task-poll-interval", tasks.DefaultPollInterval, "polling interval suggested to clients")
	fs.IntVar(&f.maxTasks, "max-tasks", tasks.DefaultMaxActive, "tasks running (or waiting for input) at once on this server (with --store, across all replicas)")
	fs.IntVar(&f.maxPerClient, "max-tasks-per-client", tasks.DefaultMaxPerOwner, "tasks running (or waiting for input) at once per client principal (with --store, across all replicas)")
	fs.Int64Var(&f.maxResult, "task-max-result", tasks.DefaultMaxResultBytes>>20, "cap on one task's stored result, MiB; a larger result fails its task")
	fs.Int64Var(&f.maxStored, "task-max-stored", tasks.DefaultMaxStoredBytes>>20, "cap on the task results stored on this server until they expire, MiB")
	fs.Int64Var(&f.maxStoredPerClient, "task-max-stored-per-client", tasks.DefaultMaxStoredPerOwner>>20, "cap on the task results stored per client principal until they expire, MiB")
	fs.DurationVar(&f.sweep, "task-sweep", tasks.DefaultSweepEvery, "interval of the sweeper that deletes expired tasks")
	fs.StringVar(&f.store, "store", "", "task store shared by replicas: redis://[user:pass@]host:port[/db] or rediss:// (TLS); query options (dial_timeout, read_timeout, pool_size, ...; docs/scale-out.md) and key_prefix= (default "+replica.DefaultKeyPrefix+"); replaces --data-dir")
	fs.DurationVar(&f.lease, "task-lease", tasks.DefaultLease, "with --store: how long the tasks this replica runs stay its own without renewal; a replica that stops renewing has its running tasks failed by another")
}

// defaultDataDir is the per-user data directory: $XDG_DATA_HOME/wasmcp,
// else ~/.local/share/wasmcp (the user config directory where that does
// not exist, else a directory of this user's under the temporary one).
func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "wasmcp")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "wasmcp")
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "wasmcp")
	}
	return privdir.Fallback("wasmcp-data")
}

// storePath is the task store file of a tools directory in dir.
func storePath(dir, toolsDir string) string {
	abs, err := filepath.Abs(toolsDir)
	if err != nil {
		abs = toolsDir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, "tasks-"+hex.EncodeToString(sum[:6])+".db")
}

func (f *taskFlags) inline() time.Duration {
	if f.inlineMS == 0 {
		return time.Nanosecond // escalate at once (0 means the default to the protocol)
	}
	return time.Duration(f.inlineMS) * time.Millisecond
}

// manager opens the task store and its manager. With the default data
// directory, a store file held by another wasmcp (say a second stdio
// server of the same tools) makes this one keep its tasks in memory; with
// an explicit --data-dir that is an error.
func (f *taskFlags) manager(ctx context.Context, toolsDir string, log *slog.Logger) (*tasks.Manager, error) {
	if f.inlineMS < 0 {
		return nil, fmt.Errorf("--task-inline-ms %d: want 0 or more", f.inlineMS)
	}
	if f.ttl <= 0 || f.maxTTL <= 0 || f.pollInterval <= 0 || f.sweep <= 0 {
		return nil, errors.New("--task-ttl, --task-max-ttl, --task-poll-interval and --task-sweep must be positive")
	}
	if f.maxTasks <= 0 || f.maxPerClient <= 0 {
		return nil, errors.New("--max-tasks and --max-tasks-per-client must be positive")
	}
	if f.lease <= 0 {
		return nil, errors.New("--task-lease must be positive")
	}
	if f.maxResult <= 0 || f.maxStored <= 0 || f.maxStoredPerClient <= 0 {
		return nil, errors.New("--task-max-result, --task-max-stored and --task-max-stored-per-client must be positive")
	}
	opts := tasks.Options{TTL: f.ttl, MaxTTL: f.maxTTL, PollInterval: f.pollInterval,
		MaxActive: f.maxTasks, MaxPerOwner: f.maxPerClient, SweepEvery: f.sweep, Logger: log, Lease: f.lease,
		MaxResultBytes: f.maxResult << 20, MaxStoredBytes: f.maxStored << 20, MaxStoredPerOwner: f.maxStoredPerClient << 20}
	var store tasks.Store
	switch {
	case f.store != "":
		if f.dataDir != "" {
			return nil, errors.New("--store and --data-dir are exclusive")
		}
		if !strings.HasPrefix(f.store, "redis://") && !strings.HasPrefix(f.store, "rediss://") && !strings.HasPrefix(f.store, "unix://") {
			return nil, errors.New("--store: want a redis://, rediss:// or unix:// URL")
		}
		r, err := replica.Open(ctx, f.store, replica.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("--store: %w", err)
		}
		f.redis, store = r, r
		opts.Limiter = r.Limiter() // --max-tasks and --max-tasks-per-client count across replicas
		log.Info("task store shared in redis", "addr", r.Addr(), "prefix", r.Prefix(), "replica", r.Replica())
	case f.dataDir == "-":
		store = tasks.NewMemory()
		log.Info("tasks are kept in memory (--data-dir -)")
	default:
		dir, explicit := f.dataDir, f.dataDir != ""
		if !explicit {
			dir = defaultDataDir()
		}
		path := storePath(dir, toolsDir)
		var b *boltstore.Store
		// The store's directory must be this user's alone: another user
		// able to write there could plant task records.
		err := privdir.Ensure(dir)
		if err == nil {
			b, err = boltstore.Open(path)
		}
		switch {
		case err == nil:
			store = b
			log.Info("task store", "path", path)
		case explicit:
			return nil, fmt.Errorf("--data-dir: %w", err)
		default:
			// Results stay on disk, not in the process's memory: a
			// private store file, removed when the server stops.
			if tmp, terr := openTempBolt(); terr == nil {
				log.Warn("task store unavailable; tasks are kept in a temporary store and will not survive a restart", "err", err, "path", tmp.Path())
				store = tmp
			} else {
				log.Warn("task store unavailable; tasks are kept in memory and will not survive a restart", "err", err, "temp_err", terr)
				store = tasks.NewMemory()
			}
		}
	}
	m, err := tasks.NewManager(ctx, store, opts)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	return m, nil
}

// tempBolt is a bbolt task store in a private temporary directory, removed
// on Close.
type tempBolt struct {
	*boltstore.Store
	dir string
}

func openTempBolt() (*tempBolt, error) {
	dir, err := os.MkdirTemp("", "wasmcp-tasks-")
	if err != nil {
		return nil, err
	}
	b, err := boltstore.Open(filepath.Join(dir, "tasks.db"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &tempBolt{Store: b, dir: dir}, nil
}

// Close closes the store and removes its directory.
func (t *tempBolt) Close() error {
	err := t.Store.Close()
	if rerr := os.RemoveAll(t.dir); err == nil {
		err = rerr
	}
	return err
}
