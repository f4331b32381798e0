package jsonrpc

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{`{"a":"plain","b":[1,2.5,true,null],"c":"\n\u00e9\"\\"}`, "", true},
		{"{\"a\":\"caf\xc3\xa9 \xe2\x82\xac\"}", "", true},
		{"{\"a\":\"x\ry\"}", `{"a":"x\u000dy"}`, true},
		{"{\"a\":\"\x00\x1b]0;evil\x07\"}", `{"a":"\u0000\u001b]0;evil\u0007"}`, true},
		{"{\"a\":\"x\xffy\"}", "{\"a\":\"x\uFFFDy\"}", true},
		{"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\uFFFD\uFFFD\uFFFD\"}", true},
		{`{"a":"\x\u12"}`, `{"a":"\\x\\u12"}`, true},
		{"{\"a\":1,\r\"b\":2}", `{"a":1,"b":2}`, true},
		{"{\"a\":\"unterminated}", "", false},
		{"{\"a\":\x01}", "", false},
		// Surrogates: a pair passes, a lone half becomes U+FFFD.
		{`{"a":"\ud83d\ude00"}`, "", true},
		{`{"a":"x\ud800y"}`, `{"a":"x\ufffdy"}`, true},
		{`{"a":"\uDBFF\u0041"}`, `{"a":"\ufffd\u0041"}`, true},
		{`{"a":"\udc00\ud800"}`, `{"a":"\ufffd\ufffd"}`, true},
		{`{"a":"\ud800"}`, `{"a":"\ufffd"}`, true},
		// Keys: the same key in sibling or nested objects is fine.
		{`{"a":{"a":1},"b":[{"a":1},{"a":2}]}`, "", true},
		{`[{"a":1},{"a":2}]`, "", true},
		{`{"a":1}}`, "", false},
		{`{"a":[1}`, "", false},
	}
	for _, c := range cases {
		got, ok := Clean([]byte(c.in))
		if ok != c.ok {
			t.Errorf("Clean(%q) ok = %v", c.in, ok)
			continue
		}
		if !ok {
			continue
		}
		want := c.want
		if want == "" {
			want = c.in
			if &got[0] != &[]byte(c.in)[0] && string(got) != c.in {
				t.Errorf("Clean(%q) changed clean text: %q", c.in, got)
			}
		}
		if string(got) != want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, want)
		}
		if !json.Valid(got) || !utf8.Valid(got) {
			t.Errorf("Clean(%q) = %q is not valid JSON in UTF-8", c.in, got)
		}
	}
}

func TestCleanDoesNotAllocateForCleanText(t *testing.T) {
	b := []byte(`{"content":[{"type":"text","text":"hello \"world\" \u00e9"}],"isError":false}`)
	if n := testing.AllocsPerRun(100, func() { Clean(b) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func TestAppendStringInvalidUTF8(t *testing.T) {
	got := AppendString(nil, "a\xffb\x01")
	if !utf8.Valid(got) || !json.Valid(got) {
		t.Fatalf("%q", got)
	}
}

func BenchmarkCleanClean(b *testing.B) {
	buf := []byte(`{"content":[{"type":"text","text":"` + string(make([]byte, 0)) + `The quick brown fox jumps over the lazy dog, caf\u00e9 \"quoted\" path C:\\tmp"}],"structuredContent":{"n":42,"list":[1,2,3]},"isError":false}`)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		Clean(buf)
	}
}

// TestCleanRefusesDuplicateKeys: an object naming a key twice, however the
// key is written, is refused: parsers disagree on which value it holds.
func TestCleanRefusesDuplicateKeys(t *testing.T) {
	many := `{`
	for i := range 40 {
		many += `"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`
	}
	cases := []struct{ in, key string }{
		{`{"a":1,"a":2}`, "a"},
		{`{"content":[],"isError":false,"content":[{"type":"text","text":"x"}]}`, "content"},
		{`{"x":{"b":1,"c":2,"b":3}}`, "b"},
		{`[1,{"a":1,"\u0061":2}]`, "a"},
		{"{\"\xff\":1,\"\xfe\":2}", "\uFFFD"},
		{`{"\ud800":1,"\udbff":2}`, "\uFFFD"},
		{many + `"kaa":2}`, "kaa"},
	}
	for _, c := range cases {
		_, err := CleanJSON([]byte(c.in))
		var dup *DuplicateKeyError
		if !errors.As(err, &dup) || dup.Key != c.key {
			t.Errorf("CleanJSON(%q) = %v, want the duplicate key %q", c.in, err, c.key)
		}
		if _, ok := Clean([]byte(c.in)); ok {
			t.Errorf("Clean(%q) accepted a duplicate key", c.in)
		}
	}
	if _, err := CleanJSON([]byte(many + `"zz":2}`)); err != nil {
		t.Errorf("40 distinct keys: %v", err)
	}
}
