package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/registry"
)

// Reload loads the tools directory again, once: the command calls it on
// SIGHUP. With pulled tools (a lock file), it first pulls again what the
// lock names, following tags. Called before Run has made the registry, it
// waits for it; called once Run is stopping, it does nothing. Its error is
// also logged.
func (s *Server) Reload(ctx context.Context) error {
	select {
	case <-s.ready:
	case <-s.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.reloads.Add(1)
	s.mu.Unlock()
	defer s.reloads.Done()
	// The reload ends when the server stops following the directory.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.runCtx, cancel)()
	s.log.Info("reloading the tools directory", "dir", s.cfg.Tools)
	s.pull.sync(ctx, true)
	err := s.reg.Reload(ctx)
	if err != nil && ctx.Err() == nil {
		s.log.Error("reloading the tools directory", "dir", s.cfg.Tools, "err", err)
	}
	return err
}

// follow keeps reg in line with its directory while the server runs: it
// watches the tools and skills directories when watch is set and, with
// pulled tools and a positive interval, pulls again (following tags) and
// reloads when that changed the directory. The returned stop ends both
// and waits for them.
func follow(ctx context.Context, reg *registry.Registry, dir string, watch bool, pull *pulledTools, interval time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if pull != nil && interval > 0 {
		wg.Go(func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					if pull.sync(ctx, true) {
						if err := reg.Reload(ctx); err != nil && ctx.Err() == nil {
							log.Error("reloading the tools directory", "dir", dir, "err", err)
						}
					}
				}
			}
		})
	}
	if watch {
		wg.Go(func() {
			if err := reg.Watch(ctx); err != nil {
				log.Error("watching the tools directory failed", "dir", dir, "err", err)
			}
		})
		wg.Go(func() {
			if err := reg.WatchSkills(ctx, registry.WatchOptions{}); err != nil {
				log.Error("watching the skills directory failed", "err", err)
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
	}
}
