package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/testkit/registrytest"
	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// TestPullStartBounded: a registry that answers every request just
// inside --registry-timeout (a slow drip, never a timeout) held serve's
// start, which loads no module before the pulled tools are checked, for
// the sum of every operation of every tool not cached: five operations
// of 2 minutes a tool. The check at start is bounded by --registry-timeout
// as a whole; what it could not fetch is left for SIGHUP or the next
// --pull-interval.
func TestPullStartBounded(t *testing.T) {
	reg := registrytest.Start(t, false)
	c, err := oci.New(oci.Options{DockerConfig: filepath.Join(t.TempDir(), "none.json")})
	if err != nil {
		t.Fatal(err)
	}
	const opTimeout = 400 * time.Millisecond
	target, _ := url.Parse("http://" + reg.Addr)
	rp := httputil.NewSingleHostReverseProxy(target)
	var fast atomic.Bool
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fast.Load() {
			rp.ServeHTTP(w, r)
			return
		}
		select {
		case <-time.After(opTimeout * 3 / 4):
		case <-r.Context().Done():
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer slow.Close()
	slowAddr := strings.TrimPrefix(slow.URL, "http://")
	dir := t.TempDir()
	lock := &pull.Lock{}
	no := false
	for i := range 3 {
		name := fmt.Sprintf("t%d", i)
		ref, _ := oci.ParseRef(reg.Addr + "/tools/" + name + ":v1")
		desc, err := c.Push(context.Background(), ref, name, []byte(fmt.Sprintf("\x00asm\x01\x00\x00\x00%d", i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		empty := []string{}
		lock.Tools = append(lock.Tools, pull.Tool{Name: name, Reference: slowAddr + "/tools/" + name + ":v1",
			Digest: desc.Digest.String(), Signed: &no, Approved: &empty})
	}
	if err := pull.WriteLock(dir, lock); err != nil {
		t.Fatal(err)
	}
	pc := &PullConfig{OCI: oci.Options{Timeout: opTimeout, DockerConfig: filepath.Join(t.TempDir(), "none.json"), MaxModule: oci.DefaultMaxModule}}
	os.WriteFile(pc.OCI.DockerConfig, []byte(`{}`), 0o600)
	ec := &host.Config{CacheDir: t.TempDir()}
	check := func() time.Duration {
		p, err := newPulledTools(dir, pc, ec, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer p.close()
		t0 := time.Now()
		p.sync(context.Background(), false)
		return time.Since(t0)
	}
	if took := check(); took > 3*opTimeout {
		t.Fatalf("the start check took %s with --registry-timeout %s: a slow registry holds serve's start", took, opTimeout)
	}
	// Cached tools are served whatever the budget: cache the three, then
	// list first a tool the slow registry cannot deliver in time.
	// The whole check has --registry-timeout (400 ms): on a loaded
	// machine one check may not fetch all three, so check again (what
	// one fetched is cached for the next), a bounded number of times.
	fast.Store(true)
	missing := func() (names []string) {
		for _, tl := range lock.Tools {
			if _, err := os.Stat(filepath.Join(dir, tl.Name+".wasm")); err != nil {
				names = append(names, tl.Name)
			}
		}
		return names
	}
	for range 20 {
		if check(); len(missing()) == 0 {
			break
		}
	}
	if m := missing(); len(m) > 0 {
		t.Fatalf("%v not installed from a fast registry after 20 checks", m)
	}
	for _, tl := range lock.Tools {
		os.Remove(filepath.Join(dir, tl.Name+".wasm"))
	}
	fast.Store(false)
	ref, _ := oci.ParseRef(reg.Addr + "/tools/a-slow:v1")
	desc, err := c.Push(context.Background(), ref, "a-slow", []byte("\x00asm\x01\x00\x00\x00slow"), nil)
	if err != nil {
		t.Fatal(err)
	}
	empty := []string{}
	lock.Put(pull.Tool{Name: "a-slow", Reference: slowAddr + "/tools/a-slow:v1", Digest: desc.Digest.String(), Signed: &no, Approved: &empty})
	if err := pull.WriteLock(dir, lock); err != nil {
		t.Fatal(err)
	}
	if took := check(); took > 3*opTimeout {
		t.Fatalf("the start check took %s", took)
	}
	for _, tl := range lock.Tools {
		_, err := os.Stat(filepath.Join(dir, tl.Name+".wasm"))
		if tl.Name == "a-slow" {
			continue // fetched in time or not: the machine's load decides
		}
		if err != nil {
			t.Fatalf("cached tool %s not served after a slow one used the budget: %v", tl.Name, err)
		}
	}
}
