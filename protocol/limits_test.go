package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestDecodeRefusesInvalidUTF8ID: a string id that is not valid UTF-8
// would be echoed into an answer that is not valid JSON: the request is
// refused with -32600 and a null id.
func TestDecodeRefusesInvalidUTF8ID(t *testing.T) {
	for _, raw := range []string{"{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"ping\"}", "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"ping\"}"} {
		_, id, err := Decode([]byte(raw))
		if err == nil || err.Code != CodeInvalidRequest || id != nil {
			t.Fatalf("%q: id %q, error %v", raw, id, err)
		}
		if out := ErrorResponse(id, err); !json.Valid(out) {
			t.Fatalf("the answer is not valid JSON: %q", out)
		}
	}
	if m, _, err := Decode([]byte(`{"jsonrpc":"2.0","id":"é ✓","method":"ping"}`)); err != nil || string(m.ID) != `"é ✓"` {
		t.Fatalf("a valid UTF-8 id: %v", err)
	}
}

// TestHandleBatchStopsWhenDone: once ctx is done the elements not yet
// served are dropped.
func TestHandleBatchStopsWhenDone(t *testing.T) {
	srv := NewServer(Options{})
	sess := NewSession()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	elems := [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)}
	if out := srv.HandleBatch(ctx, sess, elems, nil, Hint{}); out != nil {
		t.Fatalf("a batch served after its context ended: %s", out)
	}
	if out := srv.HandleBatch(context.Background(), sess, elems, nil, Hint{}); out == nil {
		t.Fatal("no answer to a live batch")
	}
}

// nullStream accepts every message.
type nullStream struct{}

func (nullStream) Send(context.Context, []byte) error { return nil }

// TestEndInputFailsRequestsToTheClient: EndInput fails the requests
// waiting for the client and every later one.
func TestEndInputFailsRequestsToTheClient(t *testing.T) {
	sess := NewSession()
	errc := make(chan error, 1)
	go func() {
		_, err := sess.request(context.Background(), nullStream{}, "roots/list", nil)
		errc <- err
	}()
	for {
		sess.mu.Lock()
		n := len(sess.pending)
		sess.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	sess.EndInput()
	if err := <-errc; !errors.Is(err, ErrClientGone) {
		t.Fatalf("pending request: %v", err)
	}
	if _, err := sess.request(context.Background(), nullStream{}, "roots/list", nil); !errors.Is(err, ErrClientGone) {
		t.Fatalf("later request: %v", err)
	}
}
