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

// TestCheckKeys: a key named twice in any object, compared as decoded, is
// reported; the outermost object's keys reach top decoded.
func TestCheckKeys(t *testing.T) {
	for _, c := range []struct {
		in, dup string
	}{
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, "a"},
		{`{"a":1,"\u0061":2}`, "a"},
		{`{"x":[{"k":1},{"k":2}]}`, ""},
		{`{"x":[{"k":1,"k":2}]}`, "k"},
		{`{"x":{"y":{"z":1,"z":1}}}`, "z"},
		{`["a","a",{"s":"a","t":"a"}]`, ""},
		{`{"é":1,"\u00e9":2}`, "é"},
	} {
		var tops []string
		err := CheckKeys([]byte(c.in), func(k []byte) error { tops = append(tops, string(k)); return nil })
		var d *DuplicateKeyError
		switch {
		case c.dup == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.dup != "" && (!errors.As(err, &d) || d.Key != c.dup):
			t.Errorf("%s: got %v, want %q twice", c.in, err, c.dup)
		}
		if c.in == `{"a":1,"\u0061":2}` && (len(tops) != 2 || tops[1] != "a") {
			t.Errorf("top keys %q, want decoded", tops)
		}
	}
}
