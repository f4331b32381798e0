package auth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeShared is an in-process SharedCounter; down makes it fail.
type fakeShared struct {
	mu     sync.Mutex
	held   map[string]int
	counts map[string]int
	down   bool
}

type fakeHold struct {
	f    *fakeShared
	key  string
	once sync.Once
}

func (f *fakeShared) Acquire(_ context.Context, key string, limit int, _ time.Duration) (SharedHold, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, false, errors.New("connection refused")
	}
	if f.held[key] >= limit {
		return nil, false, nil
	}
	f.held[key]++
	return &fakeHold{f: f, key: key}, true, nil
}

func (f *fakeShared) Allow(_ context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return false, 0, errors.New("connection refused")
	}
	if f.counts[key] >= limit {
		return false, window, nil
	}
	f.counts[key]++
	return true, 0, nil
}

func (h *fakeHold) Renew(context.Context, time.Duration) (bool, error) { return true, nil }
func (h *fakeHold) Release(context.Context) error {
	h.once.Do(func() {
		h.f.mu.Lock()
		h.f.held[h.key]--
		h.f.mu.Unlock()
	})
	return nil
}

// TestGuardSharedLimits: two guards (two replicas) sharing a counter
// count one principal's requests together; when the counter fails, each
// counts alone and keeps serving.
func TestGuardSharedLimits(t *testing.T) {
	block := make(chan struct{})
	entered := make(chan struct{}, 4)
	file := filepath.Join(t.TempDir(), "keys")
	_ = os.WriteFile(file, []byte("alice "+hashKey("key-a")+"\nbob "+hashKey("key-b")+"\n"), 0o600)
	a, _ := NewAPIKeys(APIKeysConfig{File: file})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Block") != "" {
			entered <- struct{}{}
			<-block
		}
	})
	shared := &fakeShared{held: map[string]int{}, counts: map[string]int{}}
	var logs bytes.Buffer
	var mu sync.Mutex
	opts := GuardOptions{Provider: a, Resource: "http://127.0.0.1:1/mcp", Limits: Limits{Concurrent: 1, PerMinute: 3, Shared: shared},
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))}
	g1, err := NewGuard(slow, opts)
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := NewGuard(slow, opts)
	done := make(chan struct{})
	go func() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer key-a")
		r.Header.Set("X-Block", "1")
		g1.ServeHTTP(httptest.NewRecorder(), r)
		close(done)
	}()
	<-entered
	// alice's call in flight on g1 refuses her second on g2.
	if w := do(g2, http.MethodPost, "/mcp", "Bearer key-a"); w.Code != 429 || !strings.Contains(w.Body.String(), CapConcurrent) {
		t.Fatalf("second concurrent, on the other guard: %d %s", w.Code, w.Body)
	}
	if w := do(g2, http.MethodPost, "/mcp", "Bearer key-b"); w.Code != 200 {
		t.Fatalf("bob: %d", w.Code)
	}
	close(block)
	<-done
	// The rate (3 a minute) counts both guards: one spent on g1, one on
	// g2, one more on g1, then refused on g2.
	for _, g := range []*Guard{g2, g1} {
		if w := do(g, http.MethodPost, "/mcp", "Bearer key-a"); w.Code != 200 {
			t.Fatalf("within the rate: %d %s", w.Code, w.Body)
		}
	}
	if w := do(g2, http.MethodPost, "/mcp", "Bearer key-a"); w.Code != 429 || !strings.Contains(w.Body.String(), CapPerMinute) {
		t.Fatalf("over the shared rate: %d %s", w.Code, w.Body)
	}
	shared.mu.Lock()
	if n := shared.held["principal-requests:alice"]; n != 0 {
		t.Errorf("%d places still held after the requests ended", n)
	}
	shared.down = true
	shared.mu.Unlock()
	// The counter is down: each guard counts alone, and serves.
	if w := do(g2, http.MethodPost, "/mcp", "Bearer key-a"); w.Code != 200 {
		t.Fatalf("with the shared counter down: %d %s", w.Code, w.Body)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "shared counter is unavailable") {
		t.Errorf("no warning of the shared counter's failure:\n%s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
