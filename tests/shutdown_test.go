package tests

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStdioSIGTERMExitsZero: SIGTERM to wasmcp serve on stdio is a clean
// shutdown: the process exits 0 and logs no error ("context canceled").
func TestStdioSIGTERMExitsZero(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--tools", exampleTools(t), "--cache-dir", compileCache, "--watch=false")
	c := newStdioClient(t, s) // initialize
	if r := c.request("tools/list", `{}`, nil); !strings.Contains(r, `"tools"`) {
		t.Fatalf("tools/list: %s", r)
	}
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done(): // the harness waits for the process
		if code := s.Cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("wasmcp exited with %d after SIGTERM\n%s", code, s.Stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("wasmcp did not exit within 20 s of SIGTERM")
	}
	if log := s.Stderr.String(); strings.Contains(log, "context canceled") {
		t.Fatalf("a clean shutdown logged an error:\n%s", log)
	}
}

// waitExit waits for s's process to end — the harness itself waits for
// it (e2e.Serve.Done), so a second Cmd.Wait would fail — and returns nil
// for exit status 0, else an error naming the status.
func waitExit(s *served) error {
	<-s.Done()
	if code := s.Cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("exit status %d", code)
	}
	return nil
}
