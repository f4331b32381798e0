package jsonrpc

import "unicode/utf8"

// Clean returns b, JSON text whose structure a decoder has accepted (sonic
// checks structure but not what is inside strings), as text every JSON
// parser accepts and that holds no raw line break: inside strings a raw
// control byte is escaped (\u00XX), a byte that is not UTF-8 becomes
// U+FFFD and a backslash starting no JSON escape (\x) is itself escaped;
// outside strings a CR or LF is dropped. It returns b itself when nothing
// needs changing — one pass, no allocation — and ok false when b is not
// such text (an unterminated string, a stray byte outside strings).
func Clean(b []byte) (out []byte, ok bool) {
	last := 0 // b[last:i] is not yet copied to out
	fix := func(i, skip int, repl string) {
		if out == nil {
			out = make([]byte, 0, len(b)+16)
		}
		out = append(out, b[last:i]...)
		out = append(out, repl...)
		last = i + skip
	}
	inStr := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			inStr = !inStr
			i++
		case !inStr:
			switch {
			case c == '\r' || c == '\n':
				fix(i, 1, "")
			case c >= 0x80 || (c < 0x20 && c != '\t'):
				return nil, false
			}
			i++
		case c < 0x20:
			fix(i, 1, `\u00`+string(hexDigits[c>>4])+string(hexDigits[c&0xf]))
			i++
		case c == '\\':
			if i+1 < len(b) {
				switch b[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
					continue
				case 'u':
					if i+6 <= len(b) && isHex(b[i+2]) && isHex(b[i+3]) && isHex(b[i+4]) && isHex(b[i+5]) {
						i += 6
						continue
					}
				}
			}
			fix(i, 1, `\\`)
			i++
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				fix(i, 1, "\uFFFD")
			}
			i += size
		default:
			i++
		}
	}
	if inStr {
		return nil, false
	}
	if out == nil {
		return b, true
	}
	return append(out, b[last:]...), true
}

const hexDigits = "0123456789abcdef"

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
