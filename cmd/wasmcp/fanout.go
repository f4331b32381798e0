package main

import (
	"context"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/replica"
)

// redisFanout carries guests' list changes and resource updates between
// the replicas sharing a --store, on the channel <prefix>announce: each
// message is the sending replica, the method and the uri, one per line.
type redisFanout struct {
	rdb     *redis.Client
	channel string
	replica string
	log     *slog.Logger
}

func newRedisFanout(r *replica.Redis, log *slog.Logger) *redisFanout {
	return &redisFanout{rdb: r.Client(), channel: r.Prefix() + "announce", replica: r.Replica(), log: log}
}

// Publish implements protocol.Fanout. It does not wait: an announcement
// lost in a Redis outage only delays other replicas' clients until their
// next listing.
func (f *redisFanout) Publish(method, uri string) {
	msg := f.replica + "\n" + method + "\n" + uri
	go func() {
		if err := f.rdb.Publish(context.Background(), f.channel, msg).Err(); err != nil {
			f.log.Debug("announcement not sent to the other replicas", "method", method, "err", err)
		}
	}()
}

// deliver hands the other replicas' announcements to srv until ctx ends.
func (f *redisFanout) deliver(ctx context.Context, srv *protocol.Server) {
	ps := f.rdb.Subscribe(ctx, f.channel)
	defer ps.Close()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			parts := strings.SplitN(m.Payload, "\n", 3)
			if len(parts) != 3 || parts[0] == f.replica {
				continue
			}
			srv.Broadcast(parts[1], parts[2])
		}
	}
}
