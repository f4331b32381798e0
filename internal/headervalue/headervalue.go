package headervalue

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"
)

// The markers of a Base64-encoded Mcp-Name or Mcp-Param-* value
// (2026-07-28, "Value Encoding"); they are case-sensitive.
const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// Errors of Decode.
var (
	ErrChars  = errors.New("header value contains characters outside visible ASCII, space and tab")
	ErrBase64 = errors.New("header value is not valid padded Base64 of UTF-8 text")
)

var strictB64 = base64.StdEncoding.Strict()

// sentinel reports whether v has the shape of an encoded value: the prefix
// and the suffix, not overlapping.
func sentinel(v string) bool {
	return len(v) >= len(b64Prefix)+len(b64Suffix) && strings.HasPrefix(v, b64Prefix) && strings.HasSuffix(v, b64Suffix)
}

// Encode encodes s for an Mcp-Name or Mcp-Param-* header: as is
// when it is non-empty visible ASCII with inner spaces only and not shaped
// like an encoded value; otherwise as =?base64?<standard Base64 of s>?=.
func Encode(s string) string {
	if plainSafe(s) {
		return s
	}
	return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
}

func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || sentinel(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// Decode decodes an Mcp-Name or Mcp-Param-* header value. Optional
// whitespace around it is removed first (RFC 9110 section 5.5). A value
// shaped =?base64?…?= must hold padded standard Base64 of UTF-8 text
// (ErrBase64); any other value is taken literally and must consist of
// visible ASCII, spaces and tabs (ErrChars).
func Decode(v string) (string, error) {
	v = strings.Trim(v, " \t")
	if sentinel(v) {
		inner := v[len(b64Prefix) : len(v)-len(b64Suffix)]
		for i := 0; i < len(inner); i++ {
			// The decoder would skip CR and LF; nothing but the alphabet
			// and padding is allowed here.
			if c := inner[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
				return "", ErrBase64
			}
		}
		b, err := strictB64.DecodeString(inner)
		if err != nil || !utf8.Valid(b) {
			return "", ErrBase64
		}
		return string(b), nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", ErrChars
		}
	}
	return v, nil
}
