package scaleout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The caps that count across replicas: --max-tasks counts the tasks of
// every replica.
func TestMaxTasksAcrossReplicas(t *testing.T) {
	_, rs := cluster(t, 2, "--max-tasks", "2")
	a, b := rs[0], rs[1]
	first := startTask(t, a.url(), "spin", `{"mib":1}`)
	startTask(t, b.url(), "spin", `{"mib":1}`)
	for _, r := range rs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rep, err := call(ctx, r.url(), "tools/call", `{"name":"spin","arguments":{"mib":1}}`)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Error == nil || !strings.Contains(rep.Error.Message, "the server already has 2 tasks running") {
			t.Fatalf("a third task in a cluster capped at 2: %s", rep)
		}
	}
	// Cancelling A's task (through B) frees a place on either replica.
	must(t, b.url(), "tasks/cancel", `{"taskId":"`+first+`"}`)
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rep, err := call(ctx, b.url(), "tools/call", `{"name":"spin","arguments":{"mib":1}}`)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Error == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled task's place did not come back: %s", rep)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The per-principal caps of authentication count across replicas: a
// request in flight on A counts against the principal's concurrency cap
// on B, and the per-minute rate counts both replicas' requests.
func TestPrincipalCapsAcrossReplicas(t *testing.T) {
	sum := sha256.Sum256([]byte("alice-key"))
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("alice sha256:"+hex.EncodeToString(sum[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const perMinute = 6
	_, rs := cluster(t, 2, "--auth", "apikey", "--auth-keys-file", keys,
		"--per-principal-concurrent", "1", "--per-principal-per-minute", strconv.Itoa(perMinute))
	a, b := rs[0], rs[1]
	const alice = "Bearer alice-key"
	post := func(r *replica, method, params string) reply {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rep, err := callAs(ctx, r.url(), alice, method, params)
		if err != nil && rep.status == 0 {
			t.Fatal(err)
		}
		return rep
	}
	// A subscriptions/listen stream on A: alice's request in flight.
	start := time.Now()
	ctx, endListen := context.WithCancel(context.Background())
	defer endListen()
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":` + withMeta(`{"notifications":{"toolsListChanged":true}}`) + `}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.url(), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", alice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("listen on A: %v %v", resp, err)
	}
	used := 1
	// Her second request, on B, is over the concurrency cap.
	if rep := post(b, "tools/list", `{}`); rep.status != 429 || !strings.Contains(rep.raw, "concurrent-requests") {
		t.Fatalf("a second request in flight, on B: %s", rep)
	}
	endListen()
	resp.Body.Close()
	// Once the stream has ended, B serves her.
	deadline := time.Now().Add(15 * time.Second)
	for {
		rep := post(b, "tools/list", `{}`)
		if rep.status == 200 {
			used++
			break
		}
		if !strings.Contains(rep.raw, "concurrent-requests") || time.Now().After(deadline) {
			t.Fatalf("after the stream on A ended, B: %s", rep)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The rate: perMinute requests in all, whichever replica serves them.
	served := used
	for i := 0; i < 2*perMinute; i++ {
		r := rs[i%2]
		rep := post(r, "tools/list", `{}`)
		if rep.status == 200 {
			served++
			continue
		}
		if rep.status != 429 || !strings.Contains(rep.raw, "requests-per-minute") {
			t.Fatalf("request %d: %s", i, rep)
		}
	}
	if time.Since(start) > 55*time.Second {
		t.Skip("the machine is too slow: the rate's one-minute window may have ended during the test")
	}
	if served != perMinute {
		t.Fatalf("%d requests served across two replicas within a minute, want the cap, %d", served, perMinute)
	}
}
