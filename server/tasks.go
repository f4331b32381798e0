package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/internal/privdir"
	"github.com/wasmcp/wasmcp/replica"
	"github.com/wasmcp/wasmcp/tasks"
	"github.com/wasmcp/wasmcp/tasks/boltstore"
)

// TasksConfig is the MCP tasks' settings (serve's --task-*, --max-tasks*,
// --data-dir and --store flags; see package tasks for each).
type TasksConfig struct {
	// DataDir is the directory of the task store file (default
	// DefaultDataDir, one file per tools directory; "-" keeps tasks in
	// memory).
	DataDir string
	// Store is a Redis URL of a store shared by replicas; it excludes
	// DataDir.
	Store string
	// InlineMS is how long (ms) a 2026-07-28 call of a task-capable tool
	// runs inline before it becomes a task.
	InlineMS int
	// TTL, MaxTTL, PollInterval, Sweep and Lease: a task's default and
	// longest TTL, the polling interval suggested, the sweeper's interval,
	// and how long a replica's running tasks stay its own.
	TTL, MaxTTL, PollInterval, Sweep, Lease time.Duration
	// MaxTasks and MaxPerClient cap the tasks running at once, in all and
	// per client principal.
	MaxTasks, MaxPerClient int
	// Caps on stored results, MiB: one result, all, and per client.
	MaxResultMiB, MaxStoredMiB, MaxStoredClientMiB int64
}

// DefaultDataDir is the per-user data directory: $XDG_DATA_HOME/wasmcp,
// else ~/.local/share/wasmcp (the user config directory where that does
// not exist, else a directory of this user's under the temporary one).
func DefaultDataDir() string {
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

func (f *TasksConfig) inline() time.Duration {
	if f.InlineMS == 0 {
		return time.Nanosecond // escalate at once (0 means the default to the protocol)
	}
	return time.Duration(f.InlineMS) * time.Millisecond
}

// manager opens the task store and its manager, and the shared Redis
// store when Store names one. With the default data
// directory, a store file held by another wasmcp (say a second stdio
// server of the same tools) makes this one keep its tasks in memory; with
// an explicit --data-dir that is an error.
func (f *TasksConfig) manager(ctx context.Context, toolsDir string, log *slog.Logger) (*tasks.Manager, *replica.Redis, error) {
	if f.InlineMS < 0 {
		return nil, nil, fmt.Errorf("--task-inline-ms %d: want 0 or more", f.InlineMS)
	}
	if f.TTL <= 0 || f.MaxTTL <= 0 || f.PollInterval <= 0 || f.Sweep <= 0 {
		return nil, nil, errors.New("--task-ttl, --task-max-ttl, --task-poll-interval and --task-sweep must be positive")
	}
	if f.MaxTasks <= 0 || f.MaxPerClient <= 0 {
		return nil, nil, errors.New("--max-tasks and --max-tasks-per-client must be positive")
	}
	if f.Lease <= 0 {
		return nil, nil, errors.New("--task-lease must be positive")
	}
	if f.MaxResultMiB <= 0 || f.MaxStoredMiB <= 0 || f.MaxStoredClientMiB <= 0 {
		return nil, nil, errors.New("--task-max-result, --task-max-stored and --task-max-stored-per-client must be positive")
	}
	opts := tasks.Options{TTL: f.TTL, MaxTTL: f.MaxTTL, PollInterval: f.PollInterval,
		MaxActive: f.MaxTasks, MaxPerOwner: f.MaxPerClient, SweepEvery: f.Sweep, Logger: log, Lease: f.Lease,
		MaxResultBytes: f.MaxResultMiB << 20, MaxStoredBytes: f.MaxStoredMiB << 20, MaxStoredPerOwner: f.MaxStoredClientMiB << 20}
	var store tasks.Store
	var redis *replica.Redis
	switch {
	case f.Store != "":
		if f.DataDir != "" {
			return nil, nil, errors.New("--store and --data-dir are exclusive")
		}
		if !strings.HasPrefix(f.Store, "redis://") && !strings.HasPrefix(f.Store, "rediss://") && !strings.HasPrefix(f.Store, "unix://") {
			return nil, nil, errors.New("--store: want a redis://, rediss:// or unix:// URL")
		}
		r, err := replica.Open(ctx, f.Store, replica.Options{Logger: log})
		if err != nil {
			return nil, nil, fmt.Errorf("--store: %w", err)
		}
		redis, store = r, r
		opts.Limiter = r.Limiter() // --max-tasks and --max-tasks-per-client count across replicas
		log.Info("task store shared in redis", "addr", r.Addr(), "prefix", r.Prefix(), "replica", r.Replica())
	case f.DataDir == "-":
		store = tasks.NewMemory()
		log.Info("tasks are kept in memory (--data-dir -)")
	default:
		dir, explicit := f.DataDir, f.DataDir != ""
		if !explicit {
			dir = DefaultDataDir()
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
			return nil, nil, fmt.Errorf("--data-dir: %w", err)
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
		return nil, nil, err
	}
	return m, redis, nil
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
