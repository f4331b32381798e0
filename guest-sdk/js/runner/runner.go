package main

import (
	"crypto/rand"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// prelude is the JavaScript half of the API (module "wasmcp"): McpServer,
// console, fetch, crypto, timers. It runs before the script.
//
//go:embed prelude.js
var prelude string

// maxCallStack bounds the script's call depth: a script that recurses
// without end gets a RangeError long before the Go stack reaches the
// module's memory cap.
const maxCallStack = 4096

// runner is the script's engine and the server it registered.
type runner struct {
	vm     *goja.Runtime
	name   string
	srv    *guest.Server
	invoke goja.Callable // prelude's invoke(fn, ...args): a Promise of fn's result
	cur    *guest.Context
	timers timers
}

// load compiles and runs the script and returns its runner.
func load(name, src string) (*runner, error) {
	currentName = name
	r := &runner{vm: goja.New(), name: name}
	r.vm.SetMaxCallStackSize(maxCallStack)
	r.vm.SetFieldNameMapper(goja.UncapFieldNameMapper())
	// Math.random draws from the host on every call: a generator seeded
	// at start-up would repeat its sequence in every call's instance,
	// since every call starts from the same snapshot.
	r.vm.SetRandSource(hostRandom)
	pre, err := goja.Compile("wasmcp:prelude", prelude, true)
	if err != nil {
		return nil, fmt.Errorf("runner: prelude: %w", err)
	}
	v, err := r.vm.RunProgram(pre)
	if err != nil {
		return nil, fmt.Errorf("runner: prelude: %w", err)
	}
	setup, _ := goja.AssertFunction(v)
	api, err := setup(goja.Undefined(), r.natives())
	if err != nil {
		return nil, fmt.Errorf("runner: prelude: %w", err)
	}
	r.invoke, _ = goja.AssertFunction(api.ToObject(r.vm).Get("invoke"))
	ast, err := parser.ParseFile(nil, name, src, 0)
	if err != nil {
		return nil, errors.New(syntaxError(name, err))
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, errors.New(syntaxError(name, err))
	}
	if _, err := r.vm.RunProgram(prog); err != nil {
		return nil, fmt.Errorf("the script's top level threw: %s", jsError(err))
	}
	// Timers the top level set would fire in whichever call first waits:
	// they are dropped (a call's own timers work).
	if n := r.timers.clear(); n > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d timer(s) set at the top level were dropped: timers run only while a call waits\n", name, n)
	}
	// goja builds its built-in objects on first use: build the ones
	// every call uses now, so that the snapshot holds them.
	if _, err := r.vm.RunString(warmUp); err != nil {
		return nil, fmt.Errorf("runner: warm-up: %w", err)
	}
	if r.srv == nil {
		return nil, fmt.Errorf("%s: the script registers nothing: create the server with `new McpServer({name, version})` and register tools on it", name)
	}
	return r, nil
}

// syntaxError formats a parse error as file:line:col: message (the
// first error; the rest often follow from it).
func syntaxError(name string, err error) string {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		return fmt.Sprintf("%s:%d:%d: syntax error: %s", name, e.Position.Line, e.Position.Column, e.Message)
	}
	var pe *parser.Error
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s:%d:%d: syntax error: %s", name, pe.Position.Line, pe.Position.Column, pe.Message)
	}
	return fmt.Sprintf("%s: syntax error: %v", name, err)
}

// jsError is the text of an error the script threw: the JavaScript
// error's name and message, and where it was thrown.
func jsError(err error) string {
	scriptName := currentName
	var ex *goja.Exception
	if errors.As(err, &ex) {
		// One line: the error and where it was thrown (the log keeps the
		// last line of a failed load's stderr).
		msg := strings.TrimSpace(ex.Value().String())
		for _, f := range ex.Stack() {
			if f.SrcName() == scriptName {
				p := f.Position()
				return fmt.Sprintf("%s:%d:%d: %s", scriptName, p.Line, p.Column, msg)
			}
		}
		return msg
	}
	var se *goja.StackOverflowError
	if errors.As(err, &se) {
		return "RangeError: maximum call stack size exceeded"
	}
	return err.Error()
}

// errorText is a short text for a rejection value: "Name: message" for an
// Error (the name only when it is not plain "Error"), else its string.
func (r *runner) errorText(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "the handler failed without a reason"
	}
	if o, ok := v.(*goja.Object); ok {
		if msg := o.Get("message"); msg != nil && !goja.IsUndefined(msg) {
			name := o.Get("name")
			if name != nil && !goja.IsUndefined(name) && name.String() != "Error" && name.String() != "" {
				return name.String() + ": " + msg.String()
			}
			return msg.String()
		}
	}
	return v.String()
}

// warmUp touches what a call's path through the prelude uses.
const warmUp = `(function () {
	const v = JSON.parse('{"a":[1,"x",true,null,{"b":2.5}]}');
	JSON.stringify({ content: [{ type: "text", text: String(v.a[0]) }], structuredContent: v });
	Promise.resolve(1).then((x) => x); (async () => { await 0; })();
	[1, 2].map((x) => x).reduce((a, b) => a + b, 0); Object.assign({}, v); Object.keys(v);
	new Uint8Array(1); "x".replace(/x/, "y"); Array.isArray(v); typeof Symbol.iterator;
})();`

// hostRandom is a float64 in [0, 1) from crypto/rand (the host's
// random_get).
func hostRandom() float64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return float64(binary.LittleEndian.Uint64(b[:])>>11) / (1 << 53)
}

// currentName is the script's file name, for error positions.
var currentName string

// errNeverSettled is a handler whose promise can never settle.
var errNeverSettled = errors.New("the handler's promise never settled: nothing it awaits can still happen (no timer, no request is pending)")

// run calls fn with args through the prelude's invoke and waits for the
// promise it returns: the job queue runs after every entry into the
// engine, and while the promise is pending the timers fire in order. It
// returns the promise's value, or the error it was rejected with.
func (r *runner) run(c *guest.Context, what string, fn goja.Value, args ...goja.Value) (goja.Value, error) {
	r.cur = c
	defer func() { r.cur = nil }()
	v, err := r.invoke(goja.Undefined(), append([]goja.Value{fn}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", what, jsError(err))
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return v, nil
	}
	for p.State() == goja.PromiseStatePending {
		ran, err := r.timers.runNext(r.vm)
		if err != nil {
			return nil, fmt.Errorf("%s: a timer's callback threw: %s", what, jsError(err))
		}
		if !ran {
			return nil, errNeverSettled
		}
	}
	if p.State() == goja.PromiseStateRejected {
		reason := p.Result()
		if o, ok := reason.(*goja.Object); ok {
			if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
				fmt.Fprintf(os.Stderr, "%s: %s threw: %s\n", r.name, what, st.String())
			}
		}
		return nil, errors.New(r.errorText(reason))
	}
	return p.Result(), nil
}

// toolResult is a tool result as the prelude encodes it.
type toolResult struct {
	Content           []guest.Content `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              map[string]any  `json:"_meta,omitempty"`
}

// callTool runs a tool's handler (the prelude's wrapper, which takes the
// arguments as JSON text and answers a JSON-encoded result).
func (r *runner) callTool(name string, fn goja.Value) guest.RawToolHandler {
	return func(c *guest.Context, args json.RawMessage) (*guest.ToolResult, error) {
		v, err := r.run(c, "tool "+name, fn, r.vm.ToValue(string(args)))
		if err != nil {
			return nil, err
		}
		var tr toolResult
		if err := json.Unmarshal([]byte(v.String()), &tr); err != nil {
			return nil, fmt.Errorf("tool %s: its result is not a tool result: %v", name, err)
		}
		res := &guest.ToolResult{Content: tr.Content, IsError: tr.IsError, Meta: tr.Meta}
		if len(tr.StructuredContent) > 0 {
			res.StructuredContent = tr.StructuredContent
		}
		return res, nil
	}
}
