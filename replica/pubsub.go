package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Publish sends msg to the subscribers of channel (on every replica).
func (r *Redis) Publish(ctx context.Context, channel, msg string) error {
	_, err := r.do(ctx, "PUBLISH", channel, msg)
	return unavailable(err)
}

// How a subscription notices a connection that died without a word (a
// network partition): it sends a PING every pingEvery and reconnects
// when nothing, not even the PONG, arrives for pingEvery plus the read
// timeout.
const (
	pingEvery         = 10 * time.Second
	firstSubscription = 3 * time.Second // how long Subscribe waits for the server to confirm
	maxBackoff        = 2 * time.Second // between attempts to subscribe again
)

// Subscribe calls fn with each message published on channel, in order,
// until ctx is done or the store is closed; the returned channel is
// closed when delivery has stopped. It waits up to a few seconds for the server to confirm the
// subscription, so that no message published after it returns is
// missed; an error says that first subscription failed (delivery starts
// when Redis answers). After an outage it subscribes again by itself;
// messages published meanwhile are lost.
func (r *Redis) Subscribe(ctx context.Context, channel string, fn func(msg []byte)) (<-chan struct{}, error) {
	ctx, stop := context.WithCancel(ctx)
	unlink := context.AfterFunc(r.life, stop)
	fctx, cancel := context.WithTimeout(ctx, firstSubscription)
	psc, err := r.subscribe(fctx, channel)
	cancel()
	if err != nil {
		err = unavailable(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer unlink()
		defer stop()
		backoff := 50 * time.Millisecond
		for ctx.Err() == nil {
			if psc == nil {
				var serr error
				if psc, serr = r.subscribe(ctx, channel); serr != nil {
					r.log.Debug("redis: subscribing again", "channel", channel, "err", serr)
					select {
					case <-ctx.Done():
					case <-time.After(backoff):
					}
					backoff = min(2*backoff, maxBackoff)
					continue
				}
			}
			backoff = 50 * time.Millisecond
			rerr := r.receive(ctx, psc, fn)
			_ = psc.Close()
			psc = nil
			if ctx.Err() == nil {
				r.log.Debug("redis: subscription lost", "channel", channel, "err", rerr)
			}
		}
		if psc != nil {
			_ = psc.Close()
		}
	}()
	return done, err
}

// subscribe opens a connection of its own (not from the pool) and
// subscribes it to channel, waiting for the server's confirmation.
func (r *Redis) subscribe(ctx context.Context, channel string) (*redis.PubSubConn, error) {
	if r.closed.Load() {
		return nil, errors.New("the store is closed")
	}
	c, err := dial(ctx, r.cfg)
	if err != nil {
		return nil, err
	}
	psc := &redis.PubSubConn{Conn: c}
	if err := psc.Subscribe(channel); err != nil {
		_ = c.Close()
		return nil, err
	}
	for {
		switch v := psc.ReceiveContext(ctx).(type) {
		case redis.Subscription:
			if v.Kind == "subscribe" && v.Channel == channel {
				return psc, nil
			}
		case error:
			_ = c.Close()
			return nil, v
		}
	}
}

// receive hands the messages of psc to fn until the connection fails or
// ctx is done.
func (r *Redis) receive(ctx context.Context, psc *redis.PubSubConn, fn func([]byte)) error {
	stop := context.AfterFunc(ctx, func() { _ = psc.Close() })
	defer stop()
	pinged := make(chan struct{})
	defer close(pinged)
	go func() {
		t := time.NewTicker(pingEvery)
		defer t.Stop()
		for {
			select {
			case <-pinged:
				return
			case <-t.C:
				if psc.Ping("") != nil {
					return
				}
			}
		}
	}()
	wait := pingEvery + r.cfg.readTimeout
	if r.cfg.readTimeout == 0 {
		wait = 3 * pingEvery
	}
	for {
		switch v := psc.ReceiveWithTimeout(wait).(type) {
		case redis.Message:
			fn(v.Data)
		case redis.Subscription:
			if v.Count == 0 {
				return fmt.Errorf("unsubscribed from %s", v.Channel)
			}
		case error:
			return v
		}
	}
}
