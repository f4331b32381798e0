package server

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReload: a reload asked for before Run has made the registry waits
// for it and runs (the command's SIGHUP early in the start); one asked for
// once Run has returned does nothing; one whose context ends first says
// so.
func TestReload(t *testing.T) {
	cfg := Defaults()
	cfg.Tools, cfg.Watch, cfg.Engine.CacheDir, cfg.Tasks.DataDir = t.TempDir(), false, t.TempDir(), "-"
	logs := &syncWriter{w: &bytes.Buffer{}}
	cfg.Stderr = logs
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	early, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Reload(early); !errors.Is(err, context.Canceled) {
		t.Fatalf("reload with an ended context before Run: %v", err)
	}
	reloaded := make(chan error, 1)
	go func() { reloaded <- s.Reload(context.Background()) }()
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }() // stdin at EOF: Run ends once the load has
	select {
	case err := <-reloaded:
		if err != nil {
			t.Fatalf("early reload: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the early reload never ran")
	}
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := s.Reload(context.Background()); err != nil {
		t.Fatalf("reload after Run: %v", err)
	}
	if n := strings.Count(logs.String(), `msg="reloading the tools directory"`); n != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", n, logs.String())
	}
}

// syncWriter serializes writes to w (the log is written from several
// goroutines).
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
