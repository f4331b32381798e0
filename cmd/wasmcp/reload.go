package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/wasmcp/wasmcp/registry"
)

// followTools keeps reg in line with its directory while the server runs:
// it watches the directory when watch is set, and reloads the directory
// once on every SIGHUP, with or without watching. Call it before the
// initial load so that an early SIGHUP does not end the process. The
// returned stop ends both and waits for them. With pulled tools (a lock
// file), SIGHUP and every interval (when positive) first pull again what
// the lock names, following tags.
func followTools(ctx context.Context, reg *registry.Registry, dir string, watch bool, pull *pulledTools, interval time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Info("SIGHUP: reloading the tools directory", "dir", dir)
				pull.sync(ctx, true)
				if err := reg.Reload(ctx); err != nil && ctx.Err() == nil {
					log.Error("reloading the tools directory", "dir", dir, "err", err)
				}
			}
		}
	}()
	if pull != nil && interval > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	if watch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := reg.Watch(ctx); err != nil {
				log.Error("watching the tools directory failed", "dir", dir, "err", err)
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := reg.WatchSkills(ctx, registry.WatchOptions{}); err != nil {
				log.Error("watching the skills directory failed", "err", err)
			}
		}()
	}
	return func() {
		signal.Stop(hup)
		cancel()
		wg.Wait()
	}
}
