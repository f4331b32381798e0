package host

import (
	"errors"
	"fmt"

	"github.com/wasmcp/wasmcp/contract"
)

// Kind classifies why a call to a guest failed.
type Kind string

// The kinds of guest failure.
const (
	KindTrap     Kind = "trap"     // the guest trapped (unreachable, stack exhaustion, …)
	KindExit     Kind = "exit"     // the guest exited non-zero, or exited without answering
	KindProtocol Kind = "protocol" // the guest broke the ABI (malformed line, wrong id, …)
	KindLimit    Kind = "limit"    // the guest broke a limit (deadline, memory, output)
	KindCanceled Kind = "canceled" // the caller canceled the call
	KindLoad     Kind = "load"     // the module could not be loaded
)

// GuestError is the error of a failed guest call or load. Its message names
// the module and the cause and is fit to show to a client.
type GuestError struct {
	Module string
	Kind   Kind
	Msg    string
	Err    error // underlying error, if any
}

// Error returns the message, naming the module.
func (e *GuestError) Error() string {
	return fmt.Sprintf("module %s: %s", e.Module, e.Msg)
}

// Unwrap returns the underlying error, if any.
func (e *GuestError) Unwrap() error { return e.Err }

// Is reports whether a canceled call's error matches contract.ErrCanceled.
func (e *GuestError) Is(target error) bool {
	return target == contract.ErrCanceled && e.Kind == KindCanceled
}

// IsKind reports whether err is a GuestError of kind k.
func IsKind(err error, k Kind) bool {
	var ge *GuestError
	return errors.As(err, &ge) && ge.Kind == k
}

// limitError is the cancellation cause used when a guest breaks a limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// errAnswered is the cancellation cause once the guest has answered: the
// instance is no longer needed.
var errAnswered = errors.New("answered")
