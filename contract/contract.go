package contract

import (
	"context"
	"errors"

	"github.com/wasmcp/wasmcp/abi"
)

// Peer carries what a guest sends outward during a call. Both methods must
// return promptly once ctx is done.
type Peer interface {
	// Notify forwards a notification the guest wrote: notifications/progress,
	// notifications/message, notifications/tools/list_changed,
	// notifications/prompts/list_changed,
	// notifications/resources/list_changed or
	// notifications/resources/updated; params is the raw params object.
	Notify(ctx context.Context, method string, params []byte)
	// Request sends a sampling/createMessage, elicitation/create or
	// roots/list request to the client and returns its raw result, or an
	// *abi.Error (passed to the guest with its code, message and data; any
	// other error is reported to the guest as -32603), or ErrInputRequired
	// to leave the request to the client's retry. InputKey(ctx) is the
	// guest's id for the request.
	Request(ctx context.Context, method string, params []byte) ([]byte, error)
}

// Reply is a guest's answer: a raw JSON result, or a JSON-RPC error, or,
// when the guest waits for input only a retry can give (see
// ErrInputRequired), the requests it waits for.
type Reply struct {
	Result []byte
	Error  *abi.Error
	// InputRequests, when not empty, are the guest's requests left to the
	// client's retry, in the order the guest sent them; Result and Error
	// are then unset.
	InputRequests []InputRequest
	// State is the guest's state for the retry (the params.state of its
	// last abi.MethodState notification), set only with InputRequests.
	State []byte
}

// ErrInputRequired is what Peer.Request returns when the client cannot be
// asked during this call (the 2026-07-28 revision's multi round-trip
// requests): the runner then leaves the guest's request unanswered and
// records it. Once the guest waits on stdin with every request it still has
// open recorded this way, the runner ends the instance and the call returns
// a Reply whose InputRequests lists them; the client answers them in a
// retry. A guest that answers its own request anyway wins: its Reply is
// returned as usual.
var ErrInputRequired = errors.New("host: input required from the client")

// ErrCanceled matches (with errors.Is) the error of a call that ended
// because its caller canceled it; the cause the caller gave is wrapped in
// the same error.
var ErrCanceled = errors.New("call canceled")

// InputRequest is a guest's request to the client that was left unanswered
// because Peer.Request returned ErrInputRequired.
type InputRequest struct {
	// Key is the guest's request id: a string id as is, an integer id as
	// its decimal text.
	Key string
	// Method is elicitation/create, sampling/createMessage or roots/list.
	Method string
	// Params is the raw params object the guest sent.
	Params []byte
}

type inputKeyCtx struct{}

// InputKey returns the key of the guest request a Peer.Request call serves
// (the key an InputRequest would carry), "" when ctx is not one the runner
// passed to Peer.Request.
func InputKey(ctx context.Context) string {
	k, _ := ctx.Value(inputKeyCtx{}).(string)
	return k
}

// WithInputKey returns ctx carrying key as the guest request key that
// InputKey reports. The runner sets it for every Peer.Request; other
// implementations of a module (tests, adapters) use it to do the same.
func WithInputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, inputKeyCtx{}, key)
}

// Validator is a compiled JSON Schema.
type Validator interface {
	// ValidateJSON validates a raw JSON document. With emptyAsObject an
	// absent (empty) document is validated as {} — a tool's arguments may
	// be omitted.
	ValidateJSON(doc []byte, emptyAsObject bool) error
}

// ToolSchemas are a tool's compiled schemas; Output is nil when the tool
// declares no outputSchema.
type ToolSchemas struct {
	Input  Validator
	Output Validator
}
