package host

import (
	"testing"
	"time"
)

// A guest sleeping in poll_oneoff (Go's time.Sleep) must not outlive its
// deadline: wazero's default nanosleep cannot be interrupted, the host's
// can.
func TestSleepEndsAtDeadline(t *testing.T) {
	e := newEngine(t, Limits{Timeout: 500 * time.Millisecond})
	m := loadProbe(t, e, Policy{})
	start := time.Now()
	_, err := callTool(t, m, nil, "sleep", `{"n":3600000}`)
	if !IsKind(err, KindLimit) {
		t.Fatalf("got %v; want the deadline error", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("an hour-long sleep ended after %s; want about the 500ms deadline", d)
	}
	// Short sleeps still sleep. A call's deadline is wall time (a caller
	// waits on it), so this one gets a deadline a loaded race-enabled run
	// cannot reach: the point is that the sleep is served, not how fast.
	m = loadProbe(t, e, Policy{Limits: Limits{Timeout: time.Minute}})
	start = time.Now()
	if got, err := callTool(t, m, nil, "sleep", `{"n":50}`); err != nil || got != "slept" {
		t.Fatalf("sleep 50ms: %q, %v", got, err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("a 50ms sleep took %s", d)
	}
}

// A crash report's first fatal line, not the stack trace's last, goes into
// the error.
func TestStderrKeepsTheFatalLine(t *testing.T) {
	c := &call{m: &Module{name: "x"}, limits: Limits{OutputBytes: 1 << 20}, log: quietLogger}
	c.stderr = logWriter{c: c}
	for _, chunk := range []string{"starting\nruntime: out of memory: cannot allocate\nfatal error: out", " of memory\n\ngoroutine 1 [running]:\n", "\truntime.throw()\n\t/usr/local/go/src/runtime/panic.go:1 +0x1\n"} {
		if _, err := c.stderr.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.stderr.lastLine(); got != "fatal error: out of memory" {
		t.Fatalf("lastLine = %q, want the fatal error line", got)
	}
	c.stderr = logWriter{c: c}
	_, _ = c.stderr.Write([]byte("about to exit 3\n"))
	if got := c.stderr.lastLine(); got != "about to exit 3" {
		t.Fatalf("lastLine = %q, want the last line when none is fatal", got)
	}
}
