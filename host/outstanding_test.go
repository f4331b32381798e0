package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// instantPeer answers every request at once, as a client that refuses
// elicitation does (wasmcp check's).
type instantPeer struct{}

func (instantPeer) Notify(context.Context, string, []byte) {}
func (instantPeer) Request(context.Context, string, []byte) ([]byte, error) {
	return []byte(`{"action":"decline"}`), nil
}

// TestRequestFloodMeetsTheCapHoweverFastTheAnswers: a guest that sends
// requests without reading their answers (the hostile battery's
// request_flood) is stopped at the cap of outstanding requests even when
// the client answers each at once — an answer counts until the guest has
// read it. Before, the cap counted only the requests the client had not
// answered yet, so a fast client let the guest flood until its deadline
// while the unread answers piled up in its stdin.
func TestRequestFloodMeetsTheCapHoweverFastTheAnswers(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("..", "tests", "hostile", "guests", "hostile.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := newEngine(t, Limits{Timeout: 20 * time.Second}).Load(context.Background(), "hostile", wasm, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		start := time.Now()
		_, err := callTool(t, m, instantPeer{}, "request_flood", "{}")
		if err == nil || !strings.Contains(err.Error(), "more than 16 requests to the client outstanding") {
			t.Fatalf("round %d: %v after %v; want the cap of outstanding requests", i, err, time.Since(start))
		}
	}
}

// TestInboxCountsUnreadAnswers: an answer is unread until the guest has
// read its last byte; pushed lines (the request, the host's own answers)
// are not answers.
func TestInboxCountsUnreadAnswers(t *testing.T) {
	in := newInbox(context.Background(), []byte("request\n"))
	in.begin()
	in.begin()
	in.answer([]byte("a1\n"))
	in.push([]byte("pushed\n"))
	in.answer([]byte("a2\n"))
	if n := in.unreadAnswers(); n != 2 {
		t.Fatalf("unread %d, want 2", n)
	}
	buf := make([]byte, 10)
	if n, _ := in.Read(buf); n != 10 || string(buf) != "request\na1" {
		t.Fatalf("read %q", buf[:n])
	}
	if n := in.unreadAnswers(); n != 2 {
		t.Fatalf("a1's newline unread, yet unread is %d, want 2", n)
	}
	if n, _ := in.Read(buf[:1]); n != 1 {
		t.Fatal("read")
	}
	if n := in.unreadAnswers(); n != 1 {
		t.Fatalf("a1 read whole, unread %d, want 1", n)
	}
	if n, _ := in.Read(buf[:9]); string(buf[:n]) != "pushed\na2" {
		t.Fatalf("read %q", buf[:n])
	}
	if n := in.unreadAnswers(); n != 1 {
		t.Fatalf("a2's newline unread: %d", n)
	}
	in.Read(buf)
	if n := in.unreadAnswers(); n != 0 {
		t.Fatalf("all read, unread %d", n)
	}
	// After close, answers are dropped and never counted.
	in.close()
	in.answer([]byte("late\n"))
	if n := in.unreadAnswers(); n != 0 {
		t.Fatalf("an answer after close counted: %d", n)
	}
}
