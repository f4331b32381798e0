package protocol

import "github.com/wasmcp/wasmcp/abi"

// JSON-RPC and MCP error codes.
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeResourceNotFound   = -32002 // legacy revisions only
	CodeHeaderMismatch     = -32020
	CodeUnsupportedVersion = -32022
)

// Error is the JSON-RPC error object: abi.Error, the one error type of
// guests, the protocol and tasks, so a guest's error passes to the client
// and into a task's record without conversion.
type Error = abi.Error

func errorf(code int, msg string) *Error { return &Error{Code: code, Message: msg} }
