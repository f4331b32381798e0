package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrNotJSON is the error of CleanJSON for text that is not JSON.
var ErrNotJSON = errors.New("not valid JSON")

// DuplicateKeyError is the error of CleanJSON for an object that names a
// key twice: JSON parsers disagree on which value such an object holds
// (the first, the last, an error), so it is refused rather than passed on
// to be read differently by the host and by a client.
type DuplicateKeyError struct{ Key string }

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("an object holds the key %q twice", e.Key)
}

// Clean is CleanJSON reporting only whether b could be cleaned.
func Clean(b []byte) (out []byte, ok bool) {
	out, err := CleanJSON(b)
	return out, err == nil
}

// CleanJSON returns b, JSON text whose structure a decoder has accepted
// (sonic checks structure but not what is inside strings), as text every
// JSON parser accepts alike and that holds no raw line break: inside
// strings a raw control byte is escaped (\u00XX), a byte that is not UTF-8
// becomes U+FFFD, an escaped surrogate that is not half of a pair (a lone
// \ud800) becomes \ufffd, and a backslash starting no JSON escape (\x) is
// itself escaped; outside strings a CR or LF is dropped. It returns b
// itself when nothing needs changing — one pass, no allocation for
// objects of up to 32 keys nested up to 32 deep — and an error when b is
// not such text (ErrNotJSON: an unterminated string, a stray byte outside
// strings, unbalanced brackets) or an object in it names a key twice
// (*DuplicateKeyError, keys compared as decoded).
func CleanJSON(b []byte) (out []byte, err error) {
	last := 0 // b[last:i] is not yet copied to out
	fix := func(i, skip int, repl string) {
		if out == nil {
			out = make([]byte, 0, len(b)+16)
		}
		out = append(out, b[last:i]...)
		out = append(out, repl...)
		last = i + skip
	}
	var (
		stackBuf [32]byte   // open containers: '{' or '['
		levelBuf [32]int    // for each open object, where its keys start in keys
		keyBuf   [32]keyRef // the keys of the open objects
		stack    = stackBuf[:0]
		levels   = levelBuf[:0]
		keys     = keyBuf[:0]
	)
	expectKey := false // the next string outside a string is an object key
	keyStart := -1     // the open string is a key starting here (after its quote)
	keyEscaped := false
	inStr := false
	for i := 0; i < len(b); {
		if inStr {
			// The bulk of a string needs nothing: skip to what may.
			for i < len(b) && !strSpecial[b[i]] {
				i++
			}
			if i == len(b) {
				break
			}
		}
		c := b[i]
		switch {
		case c == '"':
			if !inStr && expectKey {
				keyStart, keyEscaped = i+1, false
				expectKey = false
			} else if inStr && keyStart >= 0 {
				keys = append(keys, keyRef{raw: b[keyStart:i], escaped: keyEscaped})
				keyStart = -1
			}
			inStr = !inStr
			i++
		case !inStr:
			switch c {
			case '\r', '\n':
				fix(i, 1, "")
			case '{':
				stack = append(stack, '{')
				levels = append(levels, len(keys))
				expectKey = true
			case '[':
				stack = append(stack, '[')
			case ',':
				expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
			case '}':
				if len(stack) == 0 || stack[len(stack)-1] != '{' {
					return nil, ErrNotJSON
				}
				from := levels[len(levels)-1]
				if k, dup := duplicateKey(keys[from:]); dup {
					return nil, &DuplicateKeyError{Key: k}
				}
				keys = keys[:from]
				levels = levels[:len(levels)-1]
				stack = stack[:len(stack)-1]
				expectKey = false
			case ']':
				if len(stack) == 0 || stack[len(stack)-1] != '[' {
					return nil, ErrNotJSON
				}
				stack = stack[:len(stack)-1]
			default:
				if c >= 0x80 || (c < 0x20 && c != '\t') {
					return nil, ErrNotJSON
				}
			}
			i++
		case c < 0x20:
			keyEscaped = true
			fix(i, 1, `\u00`+string(hexDigits[c>>4])+string(hexDigits[c&0xf]))
			i++
		case c == '\\':
			keyEscaped = true
			if i+1 < len(b) {
				switch b[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
					continue
				case 'u':
					if v, ok := hex4(b, i+2); ok {
						switch {
						case utf16.IsSurrogate(rune(v)) && v < 0xDC00:
							if lo, ok := hex4(b, i+8); ok && b[i+6] == '\\' && b[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
								i += 12
								continue
							}
							fix(i, 6, `\ufffd`)
						case utf16.IsSurrogate(rune(v)):
							fix(i, 6, `\ufffd`)
						}
						i += 6
						continue
					}
				}
			}
			fix(i, 1, `\\`)
			i++
		case c >= utf8.RuneSelf:
			keyEscaped = true
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				fix(i, 1, "\uFFFD")
			}
			i += size
		default:
			i++
		}
	}
	if inStr || len(stack) > 0 {
		return nil, ErrNotJSON
	}
	if out == nil {
		return b, nil
	}
	return append(out, b[last:]...), nil
}

// keyRef is an object key as written (between its quotes); escaped says
// it holds an escape or a byte that cleaning may change, so it is compared
// decoded.
type keyRef struct {
	raw     []byte
	escaped bool
}

// duplicateKey reports a key that keys (one object's) hold twice.
func duplicateKey(keys []keyRef) (string, bool) {
	if len(keys) < 2 {
		return "", false
	}
	decoded := false
	for _, k := range keys {
		decoded = decoded || k.escaped
	}
	if !decoded && len(keys) <= 16 {
		for i := 1; i < len(keys); i++ {
			for j := 0; j < i; j++ {
				if bytes.Equal(keys[i].raw, keys[j].raw) {
					return string(keys[i].raw), true
				}
			}
		}
		return "", false
	}
	names := make([][]byte, len(keys))
	for i, k := range keys {
		names[i] = k.raw
		if k.escaped {
			names[i] = decodeKey(k.raw)
		}
	}
	slices.SortFunc(names, bytes.Compare)
	for i := 1; i < len(names); i++ {
		if bytes.Equal(names[i], names[i-1]) {
			return string(names[i]), true
		}
	}
	return "", false
}

// decodeKey decodes the text of a JSON string as CleanJSON cleans it:
// escapes decoded, bytes that are not UTF-8 and lone surrogates as U+FFFD.
func decodeKey(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw):
			switch e := raw[i+1]; e {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				v, ok := hex4(raw, i+2)
				if !ok {
					out = append(out, '\\')
					i++
					continue
				}
				r := rune(v)
				i += 6
				if utf16.IsSurrogate(r) {
					if lo, ok := hex4(raw, i+2); ok && v < 0xDC00 && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
						r = utf16.DecodeRune(r, rune(lo))
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
				continue
			case '"', '\\', '/':
				out = append(out, e)
			default:
				out = append(out, '\\')
				i++
				continue
			}
			i += 2
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(raw[i:])
			out = utf8.AppendRune(out, r)
			i += size
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (uint16, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var v uint16
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint16(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint16(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint16(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

const hexDigits = "0123456789abcdef"

// strSpecial marks the bytes inside a string that CleanJSON looks at: the
// quote, the backslash, control bytes and bytes beyond ASCII.
var strSpecial = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()
