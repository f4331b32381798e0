package e2e

import (
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Serve is a running `wasmcp serve` process.
type Serve struct {
	Cmd    *exec.Cmd
	Stderr *LockedBuffer
	Stdin  io.WriteCloser // stdio only
	Stdout io.ReadCloser  // stdio only
	URL    string         // HTTP only: the /mcp endpoint
	done   chan struct{}  // closed when the process exits
}

// StartServe starts `bin serve args...` with env added to the process's
// environment. With "--http" among args it waits (up to a minute) for the
// URL (http or https) the server logs; otherwise it serves on its stdin
// and stdout. When the test ends the process's stdin is closed and it is
// interrupted, then killed if it has not ended within 10 s; a failed
// test logs its stderr.
func StartServe(t testing.TB, bin string, env []string, args ...string) *Serve {
	t.Helper()
	s := &Serve{Stderr: &LockedBuffer{}, done: make(chan struct{})}
	s.Cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	if len(env) > 0 {
		s.Cmd.Env = append(os.Environ(), env...)
	}
	s.Cmd.Stderr = s.Stderr
	httpMode := slices.Contains(args, "--http")
	var err error
	if !httpMode {
		if s.Stdin, err = s.Cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if s.Stdout, err = s.Cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.stop(t) })
	if httpMode {
		re := regexp.MustCompile(`url=(https?://\S+/mcp)`)
		WaitFor(t, time.Minute, "the HTTP listener", func() bool {
			if m := re.FindStringSubmatch(s.Stderr.String()); m != nil {
				s.URL = m[1]
				return true
			}
			if !s.Alive() {
				t.Fatalf("wasmcp serve --http exited: %s", s.Stderr)
			}
			return false
		})
	}
	return s
}

// stop ends the process (stdin closed, interrupted, killed after 10 s)
// and logs its stderr when the test failed.
func (s *Serve) stop(t testing.TB) {
	if s.Stdin != nil {
		s.Stdin.Close()
	}
	_ = s.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-s.done
	}
	if t.Failed() {
		t.Logf("wasmcp stderr (last 64 KiB):\n%s", Tail(s.Stderr.String(), 64<<10))
	}
}

// Alive reports whether the process is still running.
func (s *Serve) Alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Done is closed when the process has ended.
func (s *Serve) Done() <-chan struct{} { return s.done }

// WaitLoaded waits until the server's initial load of its tools
// directory has ended (it serves from before).
func (s *Serve) WaitLoaded(t testing.TB) {
	t.Helper()
	// msg="modules loaded" (text) or "msg":"modules loaded" (JSON).
	WaitFor(t, 5*time.Minute, "the initial load", func() bool { return strings.Contains(s.Stderr.String(), `modules loaded"`) })
}

// WaitFor polls cond every few milliseconds until it holds, failing the
// test when d passes first.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Tail is the last n bytes of s, marked as cut when it was.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
