package tests

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"
)

// TestStdioExitsWhenTheClientLeavesDuringElicitation: a client that closes
// stdin while a guest waits for its answer (an elicitation) does not keep
// the process alive until the call's deadline: the request to the client
// fails at end of file and wasmcp serve exits at once.
func TestStdioExitsWhenTheClientLeavesDuringElicitation(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--tools", exampleTools(t), "--cache-dir", compileCache, "--watch=false", "--timeout", "60s")
	out := bufio.NewScanner(s.Stdout)
	out.Buffer(make([]byte, 1<<20), 16<<20)
	send := func(line string) {
		if _, err := io.WriteString(s.Stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitLine := func(want string) {
		t.Helper()
		for out.Scan() {
			if strings.Contains(out.Text(), want) {
				return
			}
		}
		t.Fatalf("the server's output ended before %q", want)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	waitLine(`"id":1`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm_plan","arguments":{"plan":"ship it"}}}`)
	waitLine(`"method":"elicitation/create"`)
	start := time.Now()
	s.Stdin.Close()
	go func() {
		for out.Scan() {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- waitExit(s) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wasmcp serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wasmcp serve still runs 10 s after its client closed stdin (the call's deadline is 60 s)")
	}
	t.Logf("exited %v after stdin closed", time.Since(start).Round(time.Millisecond))
}
