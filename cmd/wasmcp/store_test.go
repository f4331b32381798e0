package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/testkit/redistest"
)

func parseTaskFlags(t *testing.T, args ...string) *taskFlags {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var tf taskFlags
	tf.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &tf
}

func TestStoreFlag(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", "http://127.0.0.1:1"}, "want a redis://"},
		{[]string{"--store", "redis://127.0.0.1:1", "--data-dir", "-"}, "exclusive"},
		{[]string{"--store", "redis://u:s3cret@127.0.0.1:1"}, "unavailable"},
		{[]string{"--store", "redis://127.0.0.1:1", "--task-lease", "0s"}, "--task-lease"},
	} {
		_, err := parseTaskFlags(t, c.args...).manager(ctx, t.TempDir(), log)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	srv := redistest.Start(t, false)
	tf := parseTaskFlags(t, "--store", srv.URL()+"?key_prefix=t:")
	m, err := tf.manager(ctx, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx, 0)
	if tf.redis == nil || tf.redis.Prefix() != "t:" || m.Options().Limiter == nil {
		t.Fatal("--store did not open the shared store with its limiter")
	}
	k1, err := tf.redis.SharedKey(ctx, "state-key", minStateKey)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := tf.redis.SharedKey(ctx, "state-key", minStateKey)
	if len(k1) != minStateKey || string(k1) != string(k2) {
		t.Fatal("the shared key is not stable")
	}
}
