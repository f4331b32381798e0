package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

func BenchmarkSeal(b *testing.B) {
	s := newSealer([]byte("0123456789abcdef0123456789abcdef"), time.Minute)
	st := &sealedState{Principal: "p", Method: "tools/call", Identity: "i",
		Answers: map[string]json.RawMessage{"user_name": json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.seal(st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnseal(b *testing.B) {
	s := newSealer([]byte("0123456789abcdef0123456789abcdef"), time.Minute)
	tok, _ := s.seal(&sealedState{Principal: "p", Method: "tools/call", Identity: "i",
		Answers: map[string]json.RawMessage{"user_name": json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`)}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.unseal(tok); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCall serves one modern tools/call per iteration against the fake
// guest (no WebAssembly: the protocol's own cost).
func benchCall(b *testing.B, srv *Server, members, want string) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"` + MetaProtocolVersion +
		`":"2026-07-28","` + MetaClientCapabilities + `":` + allCaps + `},` + members + `}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		msg, _, perr := Decode(line)
		if perr != nil {
			b.Fatal(perr)
		}
		resp := srv.Handle(ctx, nil, msg, nil, Hint{})
		if resp.Code != 0 || !bytes.Contains(resp.Body, []byte(want)) {
			b.Fatalf("%s", resp.Body)
		}
	}
}

func BenchmarkModernCallComplete(b *testing.B) {
	srv, _ := mrtrServer(&testing.T{}, Options{})
	benchCall(b, srv, `"name":"plain","arguments":{"a":1}`, `"plain"`)
}

func BenchmarkModernCallInputRequired(b *testing.B) {
	srv, _ := mrtrServer(&testing.T{}, Options{})
	benchCall(b, srv, `"name":"hello","arguments":{"a":1}`, `"input_required"`)
}

func BenchmarkModernCallRetry(b *testing.B) {
	srv, _ := mrtrServer(&testing.T{}, Options{})
	msg, _, _ := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"` + MetaProtocolVersion +
		`":"2026-07-28","` + MetaClientCapabilities + `":` + allCaps + `},"name":"hello","arguments":{"a":1}}}`))
	var r1 struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	_ = json.Unmarshal(srv.Handle(context.Background(), nil, msg, nil, Hint{}).Body, &r1)
	benchCall(b, srv, `"name":"hello","arguments":{"a":1},"requestState":"`+r1.Result.RequestState+
		`","inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}`, `"Hello, Alice!"`)
}
