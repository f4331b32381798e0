package guest

import (
	"encoding/json"
	"fmt"
)

// JSON-RPC error codes the SDK answers with.
const (
	CodeParseError     = -32700 // the request line is not JSON
	CodeInvalidRequest = -32600 // the request is not a JSON-RPC request
	CodeMethodNotFound = -32601 // the module does not handle the method
	CodeInvalidParams  = -32602 // unknown tool, prompt or resource; missing argument
	CodeInternalError  = -32603 // a handler failed or panicked
)

// Error is a JSON-RPC error. A resource, prompt or completion handler that
// returns an *Error (possibly wrapped) has it answered as is; any other
// error becomes CodeInternalError with the error's text. Tool handlers never
// produce JSON-RPC errors: their errors become CallToolResult.IsError.
type Error struct {
	Code    int    // JSON-RPC error code
	Message string // short human-readable text
	Data    any    // optional, marshaled as the error's "data"
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// NewError returns an *Error with the given code, message and optional data.
func NewError(code int, message string, data any) *Error {
	return &Error{Code: code, Message: message, Data: data}
}

// InvalidParams returns a CodeInvalidParams error with a formatted message.
func InvalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// ResourceNotFound returns the error the ABI prescribes for an unknown
// resource: CodeInvalidParams with data {"uri": uri}. A template handler
// returns it when the URI matched the template but names nothing.
func ResourceNotFound(uri string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "resource not found: " + uri, Data: map[string]string{"uri": uri}}
}

// ClientError is returned by Context.Elicit, Context.Sample and
// Context.ListRoots when the host answers the request with a JSON-RPC error
// (for example because the client does not support the capability).
type ClientError struct {
	Method  string          // the request the guest sent, e.g. "elicitation/create"
	Code    int             // the JSON-RPC error code of the answer
	Message string          // the error message of the answer
	Data    json.RawMessage // the error data of the answer, if any
}

// Error describes the failed request.
func (e *ClientError) Error() string {
	return fmt.Sprintf("%s failed: %s (code %d)", e.Method, e.Message, e.Code)
}
