package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/redistest"
)

func TestStoreFlag(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	tasksWith := func(store, dataDir string, lease time.Duration) *TasksConfig {
		tc := Defaults().Tasks
		tc.Store, tc.DataDir = store, dataDir
		if lease >= 0 {
			tc.Lease = lease
		}
		return &tc
	}
	for _, c := range []struct {
		tc   *TasksConfig
		want string
	}{
		{tasksWith("http://127.0.0.1:1", "", -1), "want a redis://"},
		{tasksWith("redis://127.0.0.1:1", "-", -1), "exclusive"},
		{tasksWith("redis://u:s3cret@127.0.0.1:1", "", -1), "unavailable"},
		{tasksWith("redis://127.0.0.1:1", "", 0), "--task-lease"},
	} {
		_, _, err := c.tc.manager(ctx, t.TempDir(), log)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%+v: %v, want %q", c.tc, err, c.want)
		}
	}
	srv := redistest.Start(t, false)
	m, redis, err := tasksWith(srv.URL()+"?key_prefix=t:", "", -1).manager(ctx, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx, 0)
	if redis == nil || redis.Prefix() != "t:" || m.Options().Limiter == nil {
		t.Fatal("--store did not open the shared store with its limiter")
	}
	k1, err := redis.SharedKey(ctx, "state-key", minStateKey)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := redis.SharedKey(ctx, "state-key", minStateKey)
	if len(k1) != minStateKey || string(k1) != string(k2) {
		t.Fatal("the shared key is not stable")
	}
}
