package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// MaxDepth caps the nesting of objects and arrays in one message.
const MaxDepth = 64

// Message is one decoded JSON-RPC message. Raw members alias the bytes it
// was decoded from.
type Message struct {
	// ID is the raw id (a JSON string or integer); nil for a notification.
	ID []byte
	// Method is set on requests and notifications.
	Method string
	// Params is the raw params object, nil when absent.
	Params []byte
	// Result and Error are set on responses.
	Result []byte
	Error  *Error
}

// IsRequest reports whether the message is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether the message is a notification (a method,
// no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether the message is a response (an id, no method).
func (m *Message) IsResponse() bool { return m.Method == "" && m.ID != nil }

type envelope struct {
	JSONRPC *string      `json:"jsonrpc"`
	ID      jsonrpc.Raw  `json:"id"`
	Method  *jsonrpc.Raw `json:"method"`
	Params  jsonrpc.Raw  `json:"params"`
	Result  jsonrpc.Raw  `json:"result"`
	Error   *struct {
		Code    int         `json:"code"`
		Message string      `json:"message"`
		Data    jsonrpc.Raw `json:"data"`
	} `json:"error"`
}

// strictJSON decodes envelopes as JSON-RPC requires: member names are
// case-sensitive ("Method" is not "method").
var strictJSON = sonic.Config{CaseSensitive: true}.Froze()

// Decode checks and decodes one JSON-RPC message (not a batch). On failure
// it returns the error to answer with and, when it could be read, the id to
// answer to (nil means the answer's id is null).
func Decode(b []byte) (*Message, []byte, *Error) {
	b = bytes.Trim(b, " \t\r\n") // JSON whitespace only
	// sonic skips and captures raw values (params, unknown members)
	// without validating their escapes, so validity is checked here, by
	// encoding/json (no allocation); invalid JSON is a parse error.
	if !json.Valid(b) {
		return nil, nil, errorf(CodeParseError, "Parse error")
	}
	if err := checkDepth(b); err != nil {
		return nil, nil, err
	}
	var env envelope
	if err := strictJSON.Unmarshal(b, &env); err != nil {
		if b[0] == '{' {
			return nil, nil, errorf(CodeInvalidRequest, "Invalid request: "+firstLine(err.Error()))
		}
		// Valid JSON that is not an object (JSON-RPC 2.0 §5: -32600).
		return nil, nil, errorf(CodeInvalidRequest, "Invalid request: a message must be a JSON object")
	}
	var id []byte
	if len(env.ID) > 0 && string(env.ID) != "null" {
		if !validID(env.ID) {
			return nil, nil, errorf(CodeInvalidRequest, "Invalid request: id must be a string or an integer within ±(2^53-1)")
		}
		id = env.ID
	}
	if err := jsonrpc.CheckKeys(b, envelopeKey); err != nil {
		// A member given twice, or one spelled like the spec's but
		// not it: a gateway reading the first, or names without regard
		// to case, would see another message than the one served.
		var dup *jsonrpc.DuplicateKeyError
		if errors.As(err, &dup) {
			if dup.Key == "id" {
				id = nil
			}
			return nil, id, errorf(CodeInvalidRequest, "Invalid request: member "+strconv.Quote(dup.Key)+" is given twice")
		}
		return nil, id, errorf(CodeInvalidRequest, "Invalid request: "+err.Error())
	}
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		return nil, id, errorf(CodeInvalidRequest, `Invalid request: "jsonrpc" must be "2.0"`)
	}
	m := &Message{ID: id}
	if env.Method != nil {
		raw := []byte(*env.Method)
		if len(raw) == 0 || raw[0] != '"' {
			return nil, id, errorf(CodeInvalidRequest, "Invalid request: method must be a string")
		}
		if err := sonic.Unmarshal(raw, &m.Method); err != nil || m.Method == "" {
			return nil, id, errorf(CodeInvalidRequest, "Invalid request: method must be a non-empty string")
		}
		if len(env.ID) > 0 && string(env.ID) == "null" {
			return nil, nil, errorf(CodeInvalidRequest, "Invalid request: id must be a string or an integer within ±(2^53-1)")
		}
		if len(env.Params) > 0 && string(env.Params) != "null" {
			if env.Params[0] != '{' {
				return nil, id, errorf(CodeInvalidRequest, "Invalid request: params must be an object")
			}
			m.Params = env.Params
		}
		return m, id, nil
	}
	if id == nil {
		return nil, nil, errorf(CodeInvalidRequest, "Invalid request: no method and no id")
	}
	switch {
	case env.Error != nil:
		m.Error = &Error{Code: env.Error.Code, Message: env.Error.Message, Data: []byte(env.Error.Data)}
	case len(env.Result) > 0:
		m.Result = env.Result
	default:
		return nil, id, errorf(CodeInvalidRequest, "Invalid request: a response needs a result or an error")
	}
	return m, id, nil
}

// envelopeNames are the members of a JSON-RPC message.
var envelopeNames = [][]byte{[]byte("jsonrpc"), []byte("id"), []byte("method"), []byte("params"), []byte("result"), []byte("error")}

// envelopeKey refuses a top-level member that is one of envelopeNames
// only without regard to case or Unicode folding ("Method", "paramſ"):
// JSON-RPC names are case-sensitive, so it is not that member, but a
// decoder matching names loosely (Go's encoding/json) would read it as
// one.
func envelopeKey(k []byte) error {
	if len(k) < 2 || len(k) > 3*len("jsonrpc") {
		return nil
	}
	for _, n := range envelopeNames {
		if !bytes.Equal(k, n) && bytes.EqualFold(k, n) {
			return fmt.Errorf("member %q is not %q: JSON-RPC member names are case-sensitive", k, n)
		}
	}
	return nil
}

// maxIntID is the largest integer id: 2^53-1, the largest integer every
// JSON reader keeps exact. Past it a JavaScript client or gateway reads
// two ids as one (9007199254740992 and …993), and two answers would carry
// what it takes for one id.
const maxIntID = 1<<53 - 1

// validID accepts a JSON string or a JSON integer within ±(2^53-1). A
// string id must be valid UTF-8: it is echoed raw in the answer, which
// must be valid JSON.
func validID(b []byte) bool {
	if b[0] == '"' {
		return len(b) >= 2 && b[len(b)-1] == '"' && utf8.Valid(b)
	}
	s := b
	if s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 {
		return false
	}
	if len(s) > 16 {
		return false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= maxIntID
}

// checkDepth rejects documents nested deeper than MaxDepth without decoding
// them.
func checkDepth(b []byte) *Error {
	depth, inStr, esc := 0, false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			if depth > MaxDepth {
				return errorf(CodeInvalidRequest, "Invalid request: nesting deeper than "+strconv.Itoa(MaxDepth))
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// IsBatch reports whether b is a JSON array (a batch).
func IsBatch(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// SplitBatch splits a batch into its raw elements.
func SplitBatch(b []byte) ([][]byte, *Error) {
	if !json.Valid(b) {
		return nil, errorf(CodeParseError, "Parse error")
	}
	if err := checkDepth(b); err != nil {
		return nil, err
	}
	var elems []jsonrpc.Raw
	if err := strictJSON.Unmarshal(b, &elems); err != nil {
		return nil, errorf(CodeInvalidRequest, "Invalid request: a batch must be a JSON array")
	}
	if len(elems) == 0 {
		return nil, errorf(CodeInvalidRequest, "Invalid request: empty batch")
	}
	out := make([][]byte, len(elems))
	for i, e := range elems {
		out[i] = e
	}
	return out, nil
}

func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160]
	}
	return s
}

// ResultResponse builds {"jsonrpc":"2.0","id":id,"result":result}.
func ResultResponse(id, result []byte) []byte {
	return jsonrpc.AppendResponse(make([]byte, 0, 36+len(id)+len(result)), id, result)
}

// ErrorResponse builds a JSON-RPC error response; a nil id answers null.
func ErrorResponse(id []byte, e *Error) []byte {
	return jsonrpc.AppendError(make([]byte, 0, 64+len(id)+len(e.Message)+len(e.Data)), id, e.Code, e.Message, e.Data)
}

// Notification builds a JSON-RPC notification.
func Notification(method string, params []byte) []byte {
	return jsonrpc.AppendNotification(make([]byte, 0, 48+len(method)+len(params)), method, params)
}

// RequestMessage builds a JSON-RPC request.
func RequestMessage(id []byte, method string, params []byte) []byte {
	return jsonrpc.AppendRequest(make([]byte, 0, 48+len(id)+len(method)+len(params)), id, method, params)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte { return jsonrpc.AppendString(b, s) }
