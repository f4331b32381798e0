package headervalue

import (
	"errors"
	"testing"
	"unicode/utf8"
)

func TestHeaderValueCodec(t *testing.T) {
	// The examples of the 2026-07-28 "Value Encoding" table.
	enc := []struct{ in, out string }{
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"", "=?base64??="},
		{"a\tb", "=?base64?YQli?="},
		{"=?base64?=", "=?base64?=" /* too short to be encoded: literal */},
	}
	for _, c := range enc {
		if got := Encode(c.in); got != c.out {
			t.Errorf("Encode(%q) = %q, want %q", c.in, got, c.out)
		}
		if got, err := Decode(c.out); err != nil || got != c.in {
			t.Errorf("Decode(%q) = %q, %v; want %q", c.out, got, err, c.in)
		}
	}
	dec := []struct {
		in, out string
		err     error
	}{
		{"  spaced  ", "spaced", nil},
		{"a b", "a b", nil},
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", nil}, // no suffix: literal
		{"SGVsbG8=?=", "SGVsbG8=?=", nil},               // no prefix: literal
		{"=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=", nil},
		{"=?base64?SGVsbG8?=", "", ErrBase64},     // missing padding
		{"=?base64?SGVs!!!bG8=?=", "", ErrBase64}, // not the alphabet
		{"=?base64?SGVs\nbG8=?=", "", ErrBase64},  // the decoder would skip LF
		{"=?base64?/w==?=", "", ErrBase64},        // not UTF-8
		{"=?base64?SGVsbG9=?=", "", ErrBase64},    // non-zero padding bits
		{"caf\xc3\xa9", "", ErrChars},
		{"a\x01b", "", ErrChars},
		{"a\x7fb", "", ErrChars},
	}
	for _, c := range dec {
		got, err := Decode(c.in)
		if !errors.Is(err, c.err) || got != c.out {
			t.Errorf("Decode(%q) = %q, %v; want %q, %v", c.in, got, err, c.out, c.err)
		}
	}
}

// FuzzHeaderValue checks the Mcp-Name/Mcp-Param codec: decoding never
// panics; whatever decodes re-encodes to a value that decodes the same; and
// every UTF-8 string survives an encode/decode round trip as a valid header
// value.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=",
		"=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "", "\t", "=?base64??=", "=?base64?=", "caf\xc3\xa9", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := Decode(s); err == nil {
			if !utf8.ValidString(d) {
				t.Fatalf("Decode(%q) = %q: not UTF-8", s, d)
			}
			again, err := Decode(Encode(d))
			if err != nil || again != d {
				t.Fatalf("Decode(%q) = %q, but Decode(Encode(that)) = %q, %v", s, d, again, err)
			}
		}
		if !utf8.ValidString(s) {
			return
		}
		e := Encode(s)
		for i := 0; i < len(e); i++ {
			if e[i] < 0x21 && !(e[i] == ' ' && i > 0 && i < len(e)-1) || e[i] > 0x7e {
				t.Fatalf("Encode(%q) = %q: byte %#x cannot go in a header", s, e, e[i])
			}
		}
		got, err := Decode(e)
		if err != nil || got != s {
			t.Fatalf("Decode(Encode(%q)) = %q, %v", s, got, err)
		}
	})
}
