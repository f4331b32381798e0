package server

import (
	"context"
	"log/slog"
	"strings"

	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/replica"
)

// redisFanout carries guests' list changes and resource updates between
// the replicas sharing a --store, on the channel <prefix>announce: each
// message is the sending replica, the method and the uri, one per line.
type redisFanout struct {
	r       bus
	channel string
	log     *slog.Logger
}

// bus is what the fan-out needs of the shared store (*replica.Redis has
// it): this replica's name, the key prefix, and publish/subscribe.
type bus interface {
	Replica() string
	Prefix() string
	Publish(ctx context.Context, channel, msg string) error
	Subscribe(ctx context.Context, channel string, fn func(msg []byte)) (<-chan struct{}, error)
}

var _ bus = (*replica.Redis)(nil)

// broadcaster tells a server's clients of an announcement
// (*protocol.Server has it).
type broadcaster interface {
	Broadcast(method, uri string)
}

var _ broadcaster = (*protocol.Server)(nil)

func newRedisFanout(r bus, log *slog.Logger) *redisFanout {
	return &redisFanout{r: r, channel: r.Prefix() + "announce", log: log}
}

// Publish implements protocol.Fanout. It does not wait: an announcement
// lost in a Redis outage only delays other replicas' clients until their
// next listing.
func (f *redisFanout) Publish(method, uri string) {
	msg := f.r.Replica() + "\n" + method + "\n" + uri
	go func() {
		if err := f.r.Publish(context.Background(), f.channel, msg); err != nil {
			f.log.Debug("announcement not sent to the other replicas", "method", method, "err", err)
		}
	}()
}

// deliver hands the other replicas' announcements to srv until ctx ends.
// The subscription comes back by itself after a Redis outage.
func (f *redisFanout) deliver(ctx context.Context, srv broadcaster) {
	done, err := f.r.Subscribe(ctx, f.channel, func(msg []byte) {
		parts := strings.SplitN(string(msg), "\n", 3)
		if len(parts) != 3 || parts[0] == f.r.Replica() {
			return
		}
		srv.Broadcast(parts[1], parts[2])
	})
	if err != nil {
		f.log.Debug("announcements of the other replicas: subscribing", "err", err)
	}
	<-done
}
