// Package jsonrpc is the one JSON-RPC 2.0 encoder of wasmcp: the host's
// lines to a guest and the protocol's messages to a client are built by the
// same functions, appending to a caller's buffer without reflection. Raw
// captures a member's JSON text while decoding.
package jsonrpc

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bytedance/sonic"
)

// Raw captures a JSON value without decoding it.
type Raw []byte

// UnmarshalJSON keeps the raw bytes, which alias the decoded document.
func (r *Raw) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// AppendString appends s as a JSON string; bytes of s that are not UTF-8
// become U+FFFD.
func AppendString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	if !utf8.ValidString(s) {
		// sonic passes bytes that are not UTF-8 through unchanged.
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	enc, err := sonic.Marshal(s)
	if err != nil {
		return strconv.AppendQuote(b, s)
	}
	return append(b, enc...)
}

// appendID appends a raw id; nil is null.
func appendID(b, id []byte) []byte {
	if id == nil {
		return append(b, "null"...)
	}
	return append(b, id...)
}

// AppendResponse appends {"jsonrpc":"2.0","id":id,"result":result}; a nil
// id is null.
func AppendResponse(b, id, result []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// AppendError appends an error response; a nil id is null.
func AppendError(b, id []byte, code int, msg string, data []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	b = append(b, `,"error":`...)
	b = AppendErrorObject(b, code, msg, data)
	return append(b, '}')
}

// AppendErrorObject appends a JSON-RPC error object; data, when not empty,
// is raw JSON.
func AppendErrorObject(b []byte, code int, msg string, data []byte) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = AppendString(b, msg)
	if len(data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, '}')
}

// AppendRequest appends a request; params, when not empty, is the raw
// params object.
func AppendRequest(b, id []byte, method string, params []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	b = append(b, `,"method":`...)
	b = AppendString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// AppendNotification appends a notification; params, when not empty, is
// the raw params object.
func AppendNotification(b []byte, method string, params []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = AppendString(b, method)
	if len(params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// escapeMark starts a \u escape, which can spell any character of a member
// name.
var escapeMark = []byte(`\u`)

// MayHold reports whether JSON text b may hold any of words: spelled
// plainly, or behind a \u escape ("t\u0061sk" is "task" to every parser),
// so b holding any \u escape is always a maybe. It is the quick look that
// decides whether b needs decoding: false is certain, true is not.
func MayHold(b []byte, words ...[]byte) bool {
	if bytes.Contains(b, escapeMark) {
		return true
	}
	for _, w := range words {
		if bytes.Contains(b, w) {
			return true
		}
	}
	return false
}
