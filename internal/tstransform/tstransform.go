package tstransform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/evanw/esbuild/pkg/api"
)

// childEnv, set to childValue, makes a process a transform child.
const (
	childEnv   = "WASMCP_TS_TRANSFORM_CHILD"
	childValue = "1"
)

// cpuSeconds bounds a child's CPU time. An honest 4 MiB script
// transforms in well under a second of CPU. (A variable for the tests.)
var cpuSeconds uint64 = 10

const (
	// maxStack bounds a child's goroutine stack: nesting no honest
	// script has ends in a clear failure, fast.
	maxStack = 64 << 20
	// maxChildren is how many children may run at once.
	maxChildren = 2
	// maxStderr is how much of a child's stderr is kept for its error.
	maxStderr = 16 << 10
	// maxGrowth bounds a child's answer: maxGrowth times its source, and
	// a MiB. Lowering to ES2017 grows honest code up to about ten times
	// (a?.b?.c?.d?.e becomes five conditionals with temporaries).
	maxGrowth = 16
)

// WallCeiling is the last-resort wall-clock bound of one transform,
// waiting for a child slot included; CPU time is what judges the child.
const WallCeiling = 2 * time.Minute

// wallCeiling is WallCeiling, lowered by tests (SetWallCeilingForTest).
var wallCeiling atomic.Int64

func init() { wallCeiling.Store(int64(WallCeiling)) }

// SetWallCeilingForTest sets the wall ceiling of the transforms that start
// from now on, for a test of what a busy machine does, and returns the
// function that restores WallCeiling.
func SetWallCeilingForTest(d time.Duration) (restore func()) {
	wallCeiling.Store(int64(d))
	return func() { wallCeiling.Store(int64(WallCeiling)) }
}

// ErrBusy is in the error of a transform the wall ceiling cut — while it
// waited for a free transform, or while its child, under its CPU limit,
// waited for a CPU: the machine (or the other transforms) was busy, not
// the source. The caller tries again later.
var ErrBusy = errors.New("the machine is busy; it is tried again later")

// Error is a transform's answer of errors: one line per problem,
// FILE:LINE:COL: message (columns from 1, in UTF-8 bytes).
type Error struct{ Lines []string }

func (e *Error) Error() string { return strings.Join(e.Lines, "\n") }

// request and answer are what parent and child exchange, as JSON.
type request struct {
	Name       string `json:"name"`
	Source     string `json:"source"`
	CPUSeconds uint64 `json:"cpu_seconds"`
	// A bundle's (Bundle); Root empty is a transform.
	Root     string            `json:"root,omitempty"`
	Aliases  map[string]string `json:"aliases,omitempty"`
	MaxInput int64             `json:"max_input,omitempty"`
}

type answer struct {
	Code   string   `json:"code"`
	Errors []string `json:"errors,omitempty"`
	Inputs []Input  `json:"inputs,omitempty"`
}

var slots = make(chan struct{}, maxChildren)

// Transform turns src, the text of the script file name (NAME.ts, or
// NAME.js: then only its modules are rewritten), into CommonJS JavaScript.
// It returns an *Error when esbuild refuses the text, and another error
// when the child failed (it overran its CPU time, its stack, or the wall
// ceiling; it could not be started).
func Transform(parent context.Context, name string, src []byte) ([]byte, error) {
	a, err := run(parent, name, request{Name: name, Source: string(src), CPUSeconds: cpuSeconds}, int64(maxGrowth*len(src))+1<<20)
	if err != nil {
		return nil, err
	}
	return []byte(a.Code), nil
}

// run runs req in a child and returns its answer; its answer may be at
// most maxAnswer bytes.
func run(parent context.Context, name string, req request, maxAnswer int64) (*answer, error) {
	ceiling := time.Duration(wallCeiling.Load())
	ctx, cancel := context.WithTimeout(parent, ceiling)
	defer cancel()
	select {
	case slots <- struct{}{}:
		defer func() { <-slots }()
	case <-ctx.Done():
		if parent.Err() == nil {
			return nil, fmt.Errorf("%s: the TypeScript transform waited %s for a free transform: %w", name, ceiling, ErrBusy)
		}
		return nil, fmt.Errorf("%s: the TypeScript transform: waiting for a free transform: %w", name, context.Cause(ctx))
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	exe, err := self()
	if err != nil {
		return nil, fmt.Errorf("%s: the TypeScript transform: %w", name, err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{childEnv + "=" + childValue}
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	stderr := &capped{max: maxStderr}
	stdout := &limited{w: &out, left: maxAnswer}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		if parent.Err() == nil {
			return nil, fmt.Errorf("%s: the TypeScript transform did not finish within %s under its CPU limit: %w", name, ceiling, ErrBusy)
		}
		return nil, fmt.Errorf("%s: the TypeScript transform did not finish: %w", name, parent.Err())
	}
	if stdout.over {
		return nil, fmt.Errorf("%s: the TypeScript transform's output is more than %d bytes", name, maxAnswer)
	}
	if runErr != nil {
		return nil, fmt.Errorf("%s: the TypeScript transform failed: %s", name, childFailure(cmd, stderr.String(), runErr))
	}
	var a answer
	if err := json.Unmarshal(out.Bytes(), &a); err != nil {
		return nil, fmt.Errorf("%s: the TypeScript transform answered something else than its answer: %v", name, err)
	}
	if len(a.Errors) > 0 {
		return nil, &Error{Lines: a.Errors}
	}
	return &a, nil
}

// childFailure says why a child ended without an answer.
func childFailure(cmd *exec.Cmd, stderr string, err error) string {
	if overCPU(cmd.ProcessState, cpuSeconds) {
		return fmt.Sprintf("it used more than %d s of CPU time", cpuSeconds)
	}
	if strings.Contains(stderr, "stack overflow") || strings.Contains(stderr, "stack exceeds") {
		return "its nesting is too deep (the parser's stack overflowed)"
	}
	if i := strings.Index(stderr, "\n"); i >= 0 {
		stderr = stderr[:i]
	}
	if stderr = strings.TrimSpace(stderr); stderr != "" {
		return fmt.Sprintf("%v: %s", err, stderr)
	}
	return err.Error()
}

// self is the running executable, to start as a child.
func self() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil // still the running binary if its file was replaced
	}
	return os.Executable()
}

func init() {
	if os.Getenv(childEnv) == childValue {
		os.Exit(child(os.Stdin, os.Stdout))
	}
}

// child is a transform child's whole life: one request in, one answer out.
func child(stdin io.Reader, stdout io.Writer) int {
	debug.SetMaxStack(maxStack)
	var in request
	if err := json.NewDecoder(stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "tstransform: reading the request:", err)
		return 1
	}
	limitCPU(max(in.CPUSeconds, 1))
	var a answer
	if in.Root != "" {
		a.Code, a.Inputs, a.Errors = bundle(in)
	} else {
		a.Code, a.Errors = transform(in.Name, in.Source)
	}
	if err := json.NewEncoder(stdout).Encode(a); err != nil {
		fmt.Fprintln(os.Stderr, "tstransform: writing the answer:", err)
		return 1
	}
	return 0
}

// transform strips the types of src (a .ts name) or only rewrites its
// modules (a .js name) into CommonJS. ES2017 is what the runner's engine
// runs: later syntax is lowered.
func transform(name, src string) (string, []string) {
	loader := api.LoaderJS
	if strings.HasSuffix(name, ".ts") {
		loader = api.LoaderTS
	}
	res := api.Transform(src, api.TransformOptions{
		Loader:     loader,
		Format:     api.FormatCommonJS,
		Target:     api.ES2017,
		Sourcefile: name,
		Charset:    api.CharsetUTF8,
		LogLevel:   api.LogLevelSilent,
	})
	if len(res.Errors) == 0 {
		return string(res.Code), nil
	}
	lines := make([]string, 0, len(res.Errors))
	for _, m := range res.Errors {
		lines = append(lines, position(name, m)+m.Text)
	}
	return "", lines
}

// position is "FILE:LINE:COL: " of a message (LINE and COL from 1).
func position(name string, m api.Message) string {
	if m.Location == nil {
		return path.Base(name) + ": "
	}
	return fmt.Sprintf("%s:%d:%d: ", path.Base(name), m.Location.Line, m.Location.Column+1)
}

// limited writes at most left bytes to w, then fails: a child cannot make
// its parent hold more than the answer of its input can be.
type limited struct {
	w    io.Writer
	left int64
	over bool // a write was refused
}

var errTooLong = errors.New("the answer is longer than the input allows")

func (l *limited) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		l.over = true
		return 0, errTooLong
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.buf.String() }
