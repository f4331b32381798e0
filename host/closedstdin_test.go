package host

import (
	"context"
	"testing"
)

// A guest started without a request sees end of file on stdin: the SDK's
// Run reports it on stderr and exits 1, which RunClosedStdin reports as an
// exit, not a failure.
func TestRunClosedStdin(t *testing.T) {
	m := loadProbe(t, newEngine(t, DefaultLimits()), Policy{})
	code, err := m.RunClosedStdin(context.Background())
	if err != nil {
		t.Fatalf("RunClosedStdin: %v", err)
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1 (the SDK's \"no request on stdin\")", code)
	}
}
