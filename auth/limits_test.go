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

	"github.com/wasmcp/wasmcp/internal/limiter"
	"github.com/wasmcp/wasmcp/internal/limiter/limitertest"
)

// fakeShared is a shared counter in this process (limitertest.NewLocal); down
// makes it fail.
type fakeShared struct {
	limiter.Limiter
	mu   sync.Mutex
	down bool
}

func (f *fakeShared) failing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down
}

func (f *fakeShared) Acquire(ctx context.Context, key string, limit int, hold time.Duration) (limiter.Hold, bool, error) {
	if f.failing() {
		return nil, false, errors.New("connection refused")
	}
	return f.Limiter.Acquire(ctx, key, limit, hold)
}

func (f *fakeShared) Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	if f.failing() {
		return false, 0, errors.New("connection refused")
	}
	return f.Limiter.Allow(ctx, key, limit, window)
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
	shared := &fakeShared{Limiter: limitertest.NewLocal()}
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
	// No place is still held: a cap of one has its place free.
	if h, ok, _ := shared.Acquire(context.Background(), "principal-requests:alice", 1, time.Minute); !ok {
		t.Error("places still held after the requests ended")
	} else {
		_ = h.Release(context.Background())
	}
	shared.mu.Lock()
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
