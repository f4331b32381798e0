package protocol

// JSON-RPC and MCP error codes.
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeResourceNotFound   = -32002 // legacy revisions only
	CodeHeaderMismatch     = -32020
	CodeMissingCapability  = -32021
	CodeUnsupportedVersion = -32022
)

// Error is a JSON-RPC error with an optional raw JSON data member.
type Error struct {
	Code    int
	Message string
	Data    []byte
}

// Error returns the error's message.
func (e *Error) Error() string { return e.Message }

func errorf(code int, msg string) *Error { return &Error{Code: code, Message: msg} }
