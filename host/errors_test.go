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

func TestLimitName(t *testing.T) {
	for msg, want := range map[string]string{
		"deadline of 2s exceeded (limit timeout)":                                                                                           "timeout",
		"wrote more than 1.0 MiB to stdout and stderr (limit output)":                                                                       "output",
		"exited with code 2 (stderr: (limit bogus)); its memory reached … (limit memory)":                                                   "memory",
		"wrote a line longer than 256 KiB (limit line)":                                                                                     "line",
		"busy: 1 instances running and 0 calls queued (limits max_instances=1, max_queue=0)":                                                "queue",
		"busy: the server's memory budget of 1 GiB is taken by running calls; waited 5s for the 64 MiB this call may use (--memory-budget)": "budget",
		"trapped (stderr: (limit bogus))":                                                                                                   "other",
	} {
		if got := limitName(msg); got != want {
			t.Errorf("limitName(%q) = %q, want %q", msg, got, want)
		}
	}
}
