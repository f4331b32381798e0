package host

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/wasmcp/wasmcp/contract"
)

// TestGuestErrorCanceled checks that a canceled call, and only a canceled
// call, matches contract.ErrCanceled, with the caller's cause still found.
func TestGuestErrorCanceled(t *testing.T) {
	cause := errors.New("client went away")
	err := fmt.Errorf("wrapped: %w", &GuestError{Module: "m", Kind: KindCanceled, Msg: "call canceled", Err: cause})
	if !errors.Is(err, contract.ErrCanceled) || !errors.Is(err, cause) {
		t.Errorf("a canceled call's error does not match ErrCanceled and its cause: %v", err)
	}
	for _, k := range []Kind{KindTrap, KindExit, KindProtocol, KindLimit, KindLoad} {
		if errors.Is(&GuestError{Module: "m", Kind: k, Err: context.Canceled}, contract.ErrCanceled) {
			t.Errorf("a %s error matches ErrCanceled", k)
		}
	}
}
