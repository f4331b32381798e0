package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the JSON-RPC decoder and the batch
// splitter. Neither may panic, and what they accept must make sense: a
// decoded message is exactly one of request, notification or response,
// with a valid id, a non-empty method, an object for params, and it
// survives being encoded again; what they refuse gets a parse error or an
// invalid-request error whose response is itself valid JSON-RPC.
//
// The seed corpus is in testdata/fuzz/FuzzDecode. Run longer with
//
//	go test ./protocol -run '^$' -fuzz '^FuzzDecode$' -fuzztime 10m
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":-7,"error":{"code":-32601,"message":"no","data":[1]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"\u0070ing\ud800"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","id":2}`,
		`{"jsonrpc":"2.0","id":"\"","result":null}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\"}",
		`{"jsonrpc":"2.0",`,
		`[]`, `{}`, `null`, ``, "\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if IsBatch(b) {
			if bytes.TrimLeft(b, " \t\r\n")[0] != '[' {
				t.Fatalf("IsBatch accepted %q", b)
			}
			elems, err := SplitBatch(b)
			if err != nil {
				checkRefusal(t, b, nil, err)
			} else {
				if len(elems) == 0 {
					t.Fatalf("SplitBatch(%q) returned no elements and no error", b)
				}
				var want []json.RawMessage
				if json.Unmarshal(b, &want) != nil {
					t.Fatalf("SplitBatch accepted %q, which is not a JSON array", b)
				}
				if len(want) != len(elems) {
					t.Fatalf("SplitBatch(%q): %d elements, encoding/json sees %d", b, len(elems), len(want))
				}
				for _, e := range elems {
					if !json.Valid(e) {
						t.Fatalf("SplitBatch(%q) produced element %q, which is not JSON", b, e)
					}
					checkDecode(t, e)
				}
			}
		}
		checkDecode(t, b)
	})
}

func checkDecode(t *testing.T, b []byte) {
	m, id, err := Decode(b)
	if err != nil {
		if m != nil {
			t.Fatalf("Decode(%q) returned a message and an error", b)
		}
		checkRefusal(t, b, id, err)
		return
	}
	if m == nil {
		t.Fatalf("Decode(%q) returned neither message nor error", b)
	}
	if !json.Valid(b) {
		t.Fatalf("Decode accepted %q, which is not JSON", b)
	}
	if !bytes.Equal(m.ID, id) {
		t.Fatalf("Decode(%q): message id %q but answer id %q", b, m.ID, id)
	}
	if m.ID != nil && !validID(m.ID) {
		t.Fatalf("Decode(%q) accepted id %q", b, m.ID)
	}
	kinds := 0
	for _, k := range []bool{m.IsRequest(), m.IsNotification(), m.IsResponse()} {
		if k {
			kinds++
		}
	}
	if kinds != 1 {
		t.Fatalf("Decode(%q) gave a message that is %d of request/notification/response", b, kinds)
	}
	if m.Params != nil && (m.Params[0] != '{' || !json.Valid(m.Params)) {
		t.Fatalf("Decode(%q) accepted params %q", b, m.Params)
	}
	if m.Method != "" {
		// Encoded again, a request or notification decodes to the same
		// (bytes of the method that are not UTF-8 become U+FFFD: what is
		// sent is always UTF-8).
		again, _, err := Decode(RequestMessage(m.ID, m.Method, m.Params))
		if m.ID == nil {
			again, _, err = Decode(Notification(m.Method, m.Params))
		}
		if err != nil || again.Method != strings.ToValidUTF8(m.Method, "\uFFFD") || !bytes.Equal(again.ID, m.ID) || !bytes.Equal(again.Params, m.Params) {
			t.Fatalf("Decode(%q) = %+v; encoded again it decodes to %+v, %v", b, m, again, err)
		}
		return
	}
	if (m.Result == nil) == (m.Error == nil) {
		t.Fatalf("Decode(%q): a response needs exactly one of result and error", b)
	}
	if m.Result != nil {
		again, _, err := Decode(ResultResponse(m.ID, m.Result))
		if err != nil || !bytes.Equal(again.Result, m.Result) || !bytes.Equal(again.ID, m.ID) {
			t.Fatalf("Decode(%q): result encoded again decodes to %+v, %v", b, again, err)
		}
		return
	}
	if len(m.Error.Data) > 0 && !json.Valid(m.Error.Data) {
		t.Fatalf("Decode(%q) accepted error data %q", b, m.Error.Data)
	}
	// Encoded again, the error decodes to the same (bytes of the message
	// that are not UTF-8 become U+FFFD, as for a method).
	again, _, err := Decode(ErrorResponse(m.ID, m.Error))
	if err != nil || again.Error == nil || again.Error.Code != m.Error.Code || again.Error.Message != strings.ToValidUTF8(m.Error.Message, "\uFFFD") {
		t.Fatalf("Decode(%q): error encoded again decodes to %+v, %v", b, again, err)
	}
}

// checkRefusal checks the error a refused message gets: a standard code,
// an id that is valid (or none), and an error response that is valid
// JSON-RPC.
func checkRefusal(t *testing.T, b, id []byte, e *Error) {
	if e.Code != CodeParseError && e.Code != CodeInvalidRequest {
		t.Fatalf("refusing %q: code %d, want -32700 or -32600", b, e.Code)
	}
	if e.Code == CodeParseError && json.Valid(b) && checkDepth(b) == nil {
		t.Fatalf("refusing %q, which is valid JSON, with a parse error", b)
	}
	if id != nil && !validID(id) {
		t.Fatalf("refusing %q: answer id %q is not a valid id", b, id)
	}
	resp := ErrorResponse(id, e)
	if !json.Valid(resp) {
		t.Fatalf("refusing %q: the error response %q is not JSON", b, resp)
	}
	m, _, err := Decode(resp)
	if id != nil && (err != nil || m.Error == nil || m.Error.Code != e.Code) {
		t.Fatalf("refusing %q: the error response %q decodes to %+v, %v", b, resp, m, err)
	}
}
