package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "tools/call", "a\"b", "back\\slash", "tab\t", "\x00", "é ☃", "<&>", "\u2028", "\xff"} {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("AppendString(%q) = %s: not JSON: %v", s, got, err)
			continue
		}
		if back != s && s != "\xff" {
			t.Errorf("AppendString(%q) decodes to %q", s, back)
		}
	}
}

func TestMessages(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{string(AppendResponse(nil, []byte(`7`), []byte(`{}`))), `{"jsonrpc":"2.0","id":7,"result":{}}`},
		{string(AppendError(nil, nil, -32600, "bad", nil)), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`},
		{string(AppendError(nil, []byte(`"a"`), -32021, "m", []byte(`{"x":1}`))), `{"jsonrpc":"2.0","id":"a","error":{"code":-32021,"message":"m","data":{"x":1}}}`},
		{string(AppendRequest(nil, []byte(`1`), "roots/list", nil)), `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`},
		{string(AppendNotification(nil, "n", []byte(`{"a":1}`))), `{"jsonrpc":"2.0","method":"n","params":{"a":1}}`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

func TestMayHold(t *testing.T) {
	task := []byte(`"task"`)
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{"content":[]}`, false},
		{`{"content":[],"task":{}}`, true},
		{`{"content":[],"t\u0061sk":{}}`, true},      // an escaped name
		{`{"content":[{"text":"caf\u00e9"}]}`, true}, // any escape is a maybe
		{`{"content":[{"text":"a task"}]}`, false},   // the word, not the quoted name
		{`{"content":[{"text":"back\\slash"}]}`, false},
	} {
		if got := MayHold([]byte(c.in), task); got != c.want {
			t.Errorf("MayHold(%s) = %v, want %v", c.in, got, c.want)
		}
	}
}
