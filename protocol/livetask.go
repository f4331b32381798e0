package protocol

import (
	"context"
	"errors"
	"sync"

	"github.com/wasmcp/wasmcp/tasks"
)

// liveTask is what the server keeps of a legacy task whose guest runs here:
// the streams (and sessions) of the tasks/result calls waiting for it.
type liveTask struct {
	id   string
	sess *Session // the session that created the task

	mu      sync.Mutex
	streams []offered
	added   chan struct{} // closed when a stream is added
	askers  int           // requests to the client in flight
}

func (s *Server) liveTask(id string, sess *Session) *liveTask {
	lt := &liveTask{id: id, sess: sess, added: make(chan struct{})}
	s.mu.Lock()
	s.live[id] = lt
	s.mu.Unlock()
	return lt
}

func (s *Server) dropLive(id string) {
	s.mu.Lock()
	delete(s.live, id)
	s.mu.Unlock()
}

func (s *Server) lookupLive(id string) *liveTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// offered is the stream of a waiting tasks/result call and its session.
type offered struct {
	g    *guardStream
	sess *Session
}

// offer makes a tasks/result call's stream available to the task's
// requests until the returned function is called.
func (lt *liveTask) offer(st Stream, sess *Session) (withdraw func()) {
	g := &guardStream{s: st}
	lt.mu.Lock()
	lt.streams = append(lt.streams, offered{g: g, sess: sess})
	close(lt.added)
	lt.added = make(chan struct{})
	lt.mu.Unlock()
	return func() {
		g.close()
		lt.mu.Lock()
		for i, x := range lt.streams {
			if x.g == g {
				lt.streams = append(lt.streams[:i], lt.streams[i+1:]...)
				break
			}
		}
		lt.mu.Unlock()
	}
}

// stream waits for a stream to send the task's requests on.
func (lt *liveTask) stream(ctx context.Context) (Stream, *Session, error) {
	for {
		lt.mu.Lock()
		if n := len(lt.streams); n > 0 {
			o := lt.streams[n-1]
			lt.mu.Unlock()
			return o.g, o.sess, nil
		}
		added := lt.added
		lt.mu.Unlock()
		select {
		case <-added:
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
	}
}

// asking counts the task's requests to the client in flight and moves the
// task between working and input_required accordingly.
func (lt *liveTask) asking(s *Server, delta int) {
	lt.mu.Lock()
	lt.askers += delta
	n := lt.askers
	lt.mu.Unlock()
	m := s.tasks
	_, err := m.Update(context.Background(), lt.id, func(t *tasks.Task) error {
		switch {
		case n > 0 && t.Status == tasks.Working:
			return m.Move(t, tasks.InputRequired, "Waiting for the client to answer a request")
		case n == 0 && t.Status == tasks.InputRequired:
			return m.Move(t, tasks.Working, "")
		}
		return errUnchanged
	})
	if err != nil && !errors.Is(err, errUnchanged) && !ignorable(err) {
		s.log.Warn("recording a task's state failed", "task", lt.id, "err", err)
	}
}

var errUnchanged = errors.New("unchanged")

// guardStream is a stream that stops passing messages once closed; close
// waits for a Send in progress.
type guardStream struct {
	mu     sync.Mutex
	s      Stream
	closed bool
}

var errStreamClosed = errors.New("stream closed")

func (g *guardStream) Send(ctx context.Context, msg []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errStreamClosed
	}
	return g.s.Send(ctx, msg)
}

func (g *guardStream) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
