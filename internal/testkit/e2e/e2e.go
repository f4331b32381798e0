// Package e2e is the one end-to-end harness the test packages (tests,
// tests/hostile, tests/interop) share: building the wasmcp command once
// per test binary, a `wasmcp serve` process (Serve), an MCP session over
// its stdio (StdioClient), the 2026-07-28 POST and an SSE reader, and a
// buffer for a server's stderr that tests read while the server writes.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// BuildWasmcp builds the wasmcp command into dir and returns its path. With
// race set it is built with the race detector.
func BuildWasmcp(ctx context.Context, dir string, race bool) (string, error) {
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "wasmcp")
	if race {
		out += "-race"
	}
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/wasmcp")...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building wasmcp: %v\n%s", err, b)
	}
	return out, nil
}

// LockedBuffer is a bytes.Buffer safe for a writer and concurrent readers.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
