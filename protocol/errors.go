package protocol

import "github.com/wasmcp/wasmcp/abi"

// JSON-RPC and MCP error codes. The JSON-RPC ones are abi's (their one
// home), named here too for the transports; the missing-capability code is
// abi.CodeMissingCapability.
const (
	CodeParseError         = abi.CodeParseError
	CodeInvalidRequest     = abi.CodeInvalidRequest
	CodeMethodNotFound     = abi.CodeMethodNotFound
	CodeInvalidParams      = abi.CodeInvalidParams
	CodeInternalError      = abi.CodeInternalError
	CodeResourceNotFound   = -32002 // legacy revisions only
	CodeHeaderMismatch     = -32020
	CodeUnsupportedVersion = -32022
)

// Error is the JSON-RPC error object: abi.Error, the one error type of
// guests, the protocol and tasks, so a guest's error passes to the client
// and into a task's record without conversion.
type Error = abi.Error

func errorf(code int, msg string) *Error { return &Error{Code: code, Message: msg} }
