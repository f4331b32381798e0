package protocol

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

// TestDecodeStrictMembers (issue 36, 8): a client message naming a member
// twice, at any depth and however spelled, or naming an envelope member
// only without regard to case or Unicode folding, is -32600: a gateway
// reading the first of two, or names loosely (Go's encoding/json), would
// see another message than the one served. Before, the last of two
// "method" members ran.
func TestDecodeStrictMembers(t *testing.T) {
	refused := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","m\u0065thod":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1,"x":2}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"l":[{"k":1,"k":2}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`,
		`{"jsonrpc":"2.0","ID":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","PARAMS":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","param` + "\u017f" + `":{}}`,
		`{"JSONRPC":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"Result":{}}`,
	}
	for _, in := range refused {
		_, _, err := Decode([]byte(in))
		if err == nil || err.Code != CodeInvalidRequest {
			t.Errorf("%s: got %v, want -32600", in, err)
		}
	}
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"m\u0065thod":"ping"}`, // an escape is the name itself
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"Method":1,"method":2,"x":{"x":1}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"a":1}},"extra":{"a":1}}`,
	} {
		if _, _, err := Decode([]byte(in)); err != nil {
			t.Errorf("%s: refused: %v", in, err)
		}
	}
	// Batches: each element is held to the same rule.
	elems, perr := SplitBatch([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`))
	if perr != nil {
		t.Fatal(perr)
	}
	s := NewServer(Options{Name: "t", Version: "1"})
	sess := initialized(t, s, "2025-03-26")
	out := string(s.HandleBatch(context.Background(), sess, elems, nil, Hint{}))
	if !strings.Contains(out, `"id":1,"error":{"code":-32600`) || !strings.Contains(out, `"id":2,"result"`) {
		t.Fatalf("batch: %s", out)
	}
}

// TestRequestIDInFlight (issue 36, 8): a request whose id is the id of a
// request of the same session still being served is refused (-32600),
// however the id is spelled ("a" and "\u0061"); so is a batch naming one
// id twice. Once the first is answered, its id may be used again.
// Before, both ran and the client got two answers with one id.
func TestRequestIDInFlight(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	obj := []byte(`{"type":"object"}`)
	mod := &fakeModule{name: "m", desc: &abi.Description{ABIVersion: 1, Tools: []abi.Tool{{Name: "block", InputSchema: obj}, {Name: "quick", InputSchema: obj}}}}
	mod.call = func(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
		if strings.Contains(string(params), `"block"`) {
			started <- struct{}{}
			<-release
		}
		return textReply("ok"), nil
	}
	s := NewServer(Options{Name: "t", Version: "1"})
	cat, _ := NewCatalog([]Module{mod}, nil)
	s.SetCatalog(cat)
	sess := initialized(t, s, "2025-06-18")
	call := func(id, tool string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
	}
	done := make(chan Response, 1)
	go func() { done <- handle(t, s, sess, call(`"a"`, "block"), nil) }()
	<-started
	for _, id := range []string{`"a"`, `"\u0061"`} {
		r := handle(t, s, sess, call(id, "quick"), nil)
		if r.Code != CodeInvalidRequest || !strings.Contains(string(r.Body), "already used") {
			t.Fatalf("id %s reused while in flight: %s", id, r.Body)
		}
	}
	if r := handle(t, s, sess, call(`"b"`, "quick"), nil); r.Code != 0 {
		t.Fatalf("another id: %s", r.Body)
	}
	if r := handle(t, s, NewSession(), `{"jsonrpc":"2.0","id":"a","method":"ping"}`, nil); r.Code != 0 {
		t.Fatalf("the same id in another session: %s", r.Body)
	}
	close(release)
	select {
	case r := <-done:
		if r.Code != 0 {
			t.Fatalf("the first call: %s", r.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first call did not end")
	}
	if r := handle(t, s, sess, call(`"a"`, "quick"), nil); r.Code != 0 {
		t.Fatalf("the id once answered: %s", r.Body)
	}
	elems, _ := SplitBatch([]byte(`[` + call("7", "quick") + `,` + call("7", "quick") + `]`))
	out := string(s.HandleBatch(context.Background(), sess, elems, nil, Hint{}))
	if strings.Count(out, `"id":7,"result"`) != 1 || !strings.Contains(out, `"id":7,"error":{"code":-32600`) {
		t.Fatalf("a batch naming one id twice: %s", out)
	}
}

// TestParamsSpecNamesExact (issue 36, 8): a params member that is one of
// the spec's only without regard to case or Unicode folding ("Name",
// "argumentſ", "URI", a ref's "Type") is -32602 naming both: the host's
// decoder would read it as the spec's member, a gateway matching names
// exactly would not. Before, "Name" called the tool. Tool arguments are
// the tool's own: any names pass.
func TestParamsSpecNamesExact(t *testing.T) {
	s := newTestServer(t, 0)
	sess := initialized(t, s, "2025-11-25")
	for _, p := range []string{
		`"method":"tools/call","params":{"Name":"echo","arguments":{"text":"x"}}`,
		`"method":"tools/call","params":{"name":"echo","ARGUMENTS":{"text":"x"}}`,
		`"method":"tools/call","params":{"name":"echo","argument` + "\u017f" + `":{"text":"x"}}`,
		`"method":"tools/call","params":{"n\u0041me":"echo","arguments":{"text":"x"}}`,
		`"method":"resources/read","params":{"URI":"fake://r"}`,
		`"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_META":{}}`,
		`"method":"completion/complete","params":{"ref":{"Type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`,
	} {
		r := handle(t, s, sess, `{"jsonrpc":"2.0","id":5,`+p+`}`, nil)
		if r.Code != CodeInvalidParams || !strings.Contains(string(r.Body), "case-sensitive") {
			t.Errorf("%s: %s", p, r.Body)
		}
	}
	r := handle(t, s, sess, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","Name":1,"URI":2}}}`, nil)
	if r.Code != 0 || strings.Contains(string(r.Body), "isError\":true") {
		t.Fatalf("free-form argument names: %s", r.Body)
	}
}

// TestIntegerIDsKeptExact: an integer id past ±(2^53-1) is -32600. A
// JavaScript client or gateway reads 9007199254740992 and 9007199254740993
// as one number: both in flight at once would get two answers under what
// it takes for one id.
func TestIntegerIDsKeptExact(t *testing.T) {
	for _, id := range []string{"9007199254740992", "9007199254740993", "-9007199254740992", "12345678901234567890"} {
		_, _, err := Decode([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`))
		if err == nil || err.Code != CodeInvalidRequest {
			t.Errorf("id %s: got %v, want -32600", id, err)
		}
	}
	for _, id := range []string{"9007199254740991", "-9007199254740991", "0", "-0", "42"} {
		if _, _, err := Decode([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)); err != nil {
			t.Errorf("id %s: %v", id, err)
		}
	}
}
