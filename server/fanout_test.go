package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// memBus is an in-process publish/subscribe bus standing in for the Redis
// store; each replica gets a view with its own name.
type memBus struct {
	mu   sync.Mutex
	subs map[string][]func([]byte)
	sent chan string // every message published, in order
	fail bool        // Publish fails (a Redis outage)
}

type memReplica struct {
	*memBus
	name string
}

func (r memReplica) Replica() string { return r.name }
func (r memReplica) Prefix() string  { return "t:" }

func (b *memBus) Publish(_ context.Context, channel, msg string) error {
	if b.fail {
		return errors.New("outage")
	}
	b.mu.Lock()
	subs := b.subs[channel]
	b.mu.Unlock()
	for _, fn := range subs {
		fn([]byte(msg))
	}
	b.sent <- msg
	return nil
}

func (b *memBus) Subscribe(ctx context.Context, channel string, fn func([]byte)) (<-chan struct{}, error) {
	b.mu.Lock()
	b.subs[channel] = append(b.subs[channel], fn)
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { <-ctx.Done(); close(done) }()
	return done, nil
}

// heard records what a replica's server was told to broadcast.
type heard struct {
	mu  sync.Mutex
	got []string
}

func (h *heard) Broadcast(method, uri string) {
	h.mu.Lock()
	h.got = append(h.got, method+" "+uri)
	h.mu.Unlock()
}

func (h *heard) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// TestFanout: an announcement published by one replica reaches the other
// replicas' clients on <prefix>announce, never its own; a message that is
// not three lines is dropped; a failed publish is only logged.
func TestFanout(t *testing.T) {
	b := &memBus{subs: map[string][]func([]byte){}, sent: make(chan string, 8)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, c := newRedisFanout(memReplica{b, "a"}, log), newRedisFanout(memReplica{b, "c"}, log)
	if a.channel != "t:announce" {
		t.Fatalf("channel %q", a.channel)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var ha, hc heard
	var wg sync.WaitGroup
	wg.Go(func() { a.deliver(ctx, &ha) })
	wg.Go(func() { c.deliver(ctx, &hc) })
	for {
		b.mu.Lock()
		n := len(b.subs["t:announce"])
		b.mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	a.Publish("notifications/resources/updated", "file:///x\ny")
	if msg := <-b.sent; msg != "a\nnotifications/resources/updated\nfile:///x\ny" {
		t.Fatalf("published %q", msg)
	}
	if err := b.Publish(ctx, "t:announce", "c\nonly two lines"); err != nil {
		t.Fatal(err)
	}
	<-b.sent
	b.fail = true
	a.Publish("notifications/tools/list_changed", "")
	cancel()
	wg.Wait()
	if got := hc.list(); len(got) != 1 || got[0] != "notifications/resources/updated file:///x\ny" {
		t.Errorf("the other replica heard %q", got)
	}
	if got := ha.list(); len(got) != 0 {
		t.Errorf("the sender heard its own announcement: %q", got)
	}
	if strings.Contains(strings.Join(hc.list(), ""), "two lines") {
		t.Error("a malformed message was delivered")
	}
}
