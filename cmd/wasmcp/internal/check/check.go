package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// Options configure a check.
type Options struct {
	// File is the module file, for the report.
	File string
	// PolicyFile is the policy the module was loaded with, for the
	// report; "" when it had none (the engine's defaults).
	PolicyFile string
}

// clientRevision is the revision the check's client speaks: the last one
// in which the server sends its requests to the client in-band, so the
// guest's elicitation, sampling and roots requests reach the client.
const clientRevision = "2025-11-25"

// Run checks a module loaded as `wasmcp serve` loads it (registry.LoadFile
// or host.Engine.Load with its policy) and returns the report. It calls the
// module's guest once per tool (twice counting the refused call, which
// must not reach it), once per resource, template and prompt, and once
// with stdin closed.
func Run(ctx context.Context, m *host.Module, opts Options) *Report {
	c := &checker{ctx: ctx, m: m, rec: &recorder{m: m}, r: &Report{File: opts.File, Module: m.Name()}}
	c.run(opts)
	return c.r
}

// checker is one run of the checks.
type checker struct {
	ctx    context.Context
	m      *host.Module
	rec    *recorder
	r      *Report
	srv    *protocol.Server
	sess   *protocol.Session
	client *client
	nextID int
}

func (c *checker) run(opts Options) {
	d := c.m.Description()
	pol := "none (the defaults)"
	if opts.PolicyFile != "" {
		pol = opts.PolicyFile
	}
	c.r.add(OK, "load", "%s, %s, %s, %s; policy %s", plural(len(d.Tools), "tool"), plural(len(d.Resources), "resource"),
		plural(len(d.ResourceTemplates), "template"), plural(len(d.Prompts), "prompt"), pol)

	// The catalog as serve builds it; what it refuses is logged at warn.
	refusals := &warnings{}
	cat, _ := protocol.NewCatalog([]protocol.Module{c.rec}, slog.New(refusals))
	c.srv = protocol.NewServer(protocol.Options{Name: "wasmcp-check", Version: "check",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	c.srv.SetCatalog(cat)
	c.sess = protocol.NewSession()
	c.client = &client{sess: c.sess}
	if probs := refusals.list(); len(probs) > 0 {
		c.r.add(Fail, "description", "the server refuses %s", strings.Join(probs, "; "))
	} else {
		c.r.add(OK, "description", "every tool, resource, template and prompt is served")
	}
	if err := c.initialize(); err != nil {
		c.r.add(Fail, "initialize", "%v", err)
		return
	}
	c.listTools()

	for i := range d.Tools {
		c.tool(&d.Tools[i])
	}
	for i := range d.Resources {
		c.resource(d.Resources[i].URI, "resource "+d.Resources[i].URI)
	}
	for i := range d.ResourceTemplates {
		t := &d.ResourceTemplates[i]
		uri := fillTemplate(t.URITemplate, func(v string) string {
			return c.complete(map[string]string{"type": "ref/resource", "uri": t.URITemplate}, "template "+t.URITemplate, v)
		})
		c.resource(uri, "template "+t.URITemplate)
	}
	for i := range d.Prompts {
		c.prompt(&d.Prompts[i])
	}
	c.ids()
	c.closedStdin()
	c.limits()
}

// initialize opens the session as a client declaring elicitation, sampling
// and roots, so the guest's requests reach the check's client.
func (c *checker) initialize() error {
	params := `{"protocolVersion":"` + clientRevision + `","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"wasmcp-check","version":"1"}}`
	_, rpcErr, err := c.request("initialize", []byte(params))
	if err != nil {
		return err
	}
	if rpcErr != nil {
		return fmt.Errorf("initialize: %s", rpcErr.Message)
	}
	msg, _, perr := protocol.Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if perr != nil {
		return errors.New(perr.Message)
	}
	c.srv.Handle(c.ctx, c.sess, msg, c.client, protocol.Hint{})
	return nil
}

// request sends one request to the server and returns its result or
// error.
func (c *checker) request(method string, params []byte) (json.RawMessage, *abi.Error, error) {
	c.nextID++
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": json.RawMessage(params)})
	msg, _, perr := protocol.Decode(line)
	if perr != nil {
		return nil, nil, fmt.Errorf("the check built a request the server refuses: %s", perr.Message)
	}
	resp := c.srv.Handle(c.ctx, c.sess, msg, c.client, protocol.Hint{})
	if resp.Body == nil {
		return nil, nil, fmt.Errorf("%s: no answer (canceled: %v)", method, context.Cause(c.ctx))
	}
	var out struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *abi.Error      `json:"error"`
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, nil, fmt.Errorf("%s: the server answered invalid JSON: %v", method, err)
	}
	return out.Result, out.Error, nil
}

// listTools compares tools/list with the description.
func (c *checker) listTools() {
	want := len(c.m.Description().Tools)
	if want == 0 {
		return
	}
	res, rpcErr, err := c.request("tools/list", []byte(`{}`))
	if err == nil && rpcErr != nil {
		err = errors.New(rpcErr.Message)
	}
	if err != nil {
		c.r.add(Fail, "tools/list", "%v", err)
		return
	}
	var l struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(res, &l)
	if len(l.Tools) != want {
		c.r.add(Fail, "tools/list", "lists %d of the %d tools the module declares", len(l.Tools), want)
		return
	}
	c.r.add(OK, "tools/list", "lists the %s", plural(want, "tool"))
}

// tool runs the checks of one tool.
func (c *checker) tool(t *abi.Tool) {
	name := "tool " + t.Name
	s, ok := c.m.Schemas(t.Name)
	if !ok {
		c.r.add(Fail, name+": schemas", "the module has no compiled schemas for it")
		return
	}
	var probs []string
	if rootType(t.InputSchema) != "object" {
		probs = append(probs, `inputSchema's root is not "type": "object"`)
	}
	if len(t.OutputSchema) > 0 && rootType(t.OutputSchema) != "object" {
		probs = append(probs, `outputSchema's root is not "type": "object"`)
	}
	if len(probs) > 0 {
		c.r.add(Fail, name+": schemas", "%s", strings.Join(probs, "; "))
	} else if len(t.OutputSchema) > 0 {
		c.r.add(OK, name+": schemas", "input and output schemas compile, objects at the root")
	} else {
		c.r.add(OK, name+": schemas", "input schema compiles, an object at the root; no output schema")
	}

	if t.Execution != nil && t.Execution.TaskSupport == abi.TaskRequired {
		c.r.add(Skip, name+": answers", "taskSupport is required: the tool is called only as a task, and the check calls tools inline")
		return
	}
	v, err := Generate(t.InputSchema)
	var args []byte
	if err == nil {
		args, _ = json.Marshal(v)
		if _, isObj := v.(map[string]any); !isObj {
			err = fmt.Errorf("generated %s, not an object", args)
		} else if verr := s.Input.ValidateJSON(args, true); verr != nil {
			err = fmt.Errorf("generated %s, which the schema refuses: %v", args, verr)
		}
	}
	if err != nil {
		c.r.add(Skip, name+": answers", "cannot generate arguments: %v", err)
	} else {
		c.callTool(t, s, args)
	}
	c.refusal(t, s, v)
}

// callTool calls a tool with valid arguments and checks the answer, what
// the guest wrote on the way and after.
func (c *checker) callTool(t *abi.Tool, s contract.ToolSchemas, args []byte) {
	name := "tool " + t.Name
	token := "check-" + t.Name
	params, _ := json.Marshal(map[string]any{"name": t.Name, "arguments": json.RawMessage(args),
		"_meta": map[string]any{"progressToken": token}})
	before := c.rec.count()
	c.client.reset()
	res, rpcErr, err := c.request("tools/call", params)
	calls := c.rec.since(before)
	if err != nil {
		c.r.add(Fail, name+": answers", "%v", err)
		return
	}
	if len(calls) != 1 {
		c.r.add(Fail, name+": answers", "the server called the guest %d times for one call (%s)", len(calls), clientView(res, rpcErr))
		return
	}
	call := calls[0]
	argText := shortText(string(args), 120)
	switch {
	case call.err != nil:
		c.r.add(Fail, name+": answers", "arguments %s: %v", argText, call.err)
	case call.reply.Error != nil:
		c.r.add(Fail, name+": answers", "arguments %s: a JSON-RPC error %d %q (a tool that fails answers a result with isError: true)",
			argText, call.reply.Error.Code, call.reply.Error.Message)
	default:
		var r toolResult
		_ = json.Unmarshal(call.reply.Result, &r)
		if r.IsError {
			c.r.add(OK, name+": answers", "arguments %s: a tool error %q", argText, shortText(r.firstText(), 120))
		} else {
			c.r.add(OK, name+": answers", "arguments %s", argText)
		}
		probs := toolResultProblems(call.reply.Result, s)
		if rpcErr != nil {
			probs = append(probs, fmt.Sprintf("the server refused the answer: %s", rpcErr.Message))
		} else if cr := clientResult(res); cr.IsError && !r.IsError {
			probs = append(probs, "the server turned it into a tool error: "+cr.firstText())
		}
		if len(probs) > 0 {
			c.r.add(Fail, name+": result", "%s", strings.Join(probs, "; "))
		} else if len(t.OutputSchema) > 0 && !r.IsError {
			c.r.add(OK, name+": result", "a well-formed CallToolResult; structuredContent matches the output schema")
		} else {
			c.r.add(OK, name+": result", "a well-formed CallToolResult")
		}
	}
	c.after(name, call)
	c.notifications(name, call, token)
	c.guestRequests(name, call)
}

// refusal calls a tool with arguments its schema refuses: the server must
// answer a tool error without starting the guest.
func (c *checker) refusal(t *abi.Tool, s contract.ToolSchemas, valid any) {
	check := "tool " + t.Name + ": invalid arguments refused"
	vm, _ := valid.(map[string]any)
	if vm == nil {
		vm = map[string]any{}
	}
	var pick *invalidArgs
	for _, cand := range invalidCandidates(t.InputSchema, vm) {
		b, _ := json.Marshal(cand.args)
		if s.Input.ValidateJSON(b, true) != nil {
			pick = &cand
			break
		}
	}
	if pick == nil {
		c.r.add(Skip, check, "the input schema accepts every argument object the check tried")
		return
	}
	params, _ := json.Marshal(map[string]any{"name": t.Name, "arguments": pick.args})
	before := c.rec.count()
	res, rpcErr, err := c.request("tools/call", params)
	calls := c.rec.since(before)
	switch {
	case err != nil:
		c.r.add(Fail, check, "%v", err)
	case len(calls) > 0:
		c.r.add(Fail, check, "arguments %s reached the guest", pick.what)
	case rpcErr != nil:
		c.r.add(OK, check, "arguments %s: refused with error %d before the guest ran", pick.what, rpcErr.Code)
	default:
		cr := clientResult(res)
		if !cr.IsError {
			c.r.add(Fail, check, "arguments %s: the server answered a result that is not a tool error", pick.what)
			return
		}
		c.r.add(OK, check, "arguments %s: %q, the guest never ran", pick.what, shortText(cr.firstText(), 100))
	}
}

// after checks that the guest wrote nothing after its answer.
func (c *checker) after(name string, call *callRecord) {
	if call.err != nil || call.reply == nil {
		return
	}
	if n := call.stats.AfterAnswer; n > 0 {
		c.r.add(Fail, name+": nothing after the answer", "wrote %s after its answer (the host ignores them; the ABI forbids them)", plural(n, "line"))
		return
	}
	c.r.add(OK, name+": nothing after the answer", "")
}

// notifications checks the notifications the guest wrote during a call.
func (c *checker) notifications(name string, call *callRecord, token string) {
	call.mu.Lock()
	notes := append([]message(nil), call.notes...)
	call.mu.Unlock()
	if len(notes) == 0 {
		c.r.add(OK, name+": notifications", "none sent")
		return
	}
	var probs []string
	counts := map[string]int{}
	last := -1.0
	for i, n := range notes {
		counts[n.method]++
		if p := noteProblem(n, token, &last); p != "" {
			probs = append(probs, fmt.Sprintf("#%d %s: %s", i+1, n.method, p))
		}
	}
	if len(probs) > 0 {
		c.r.add(Fail, name+": notifications", "%s", strings.Join(probs, "; "))
		return
	}
	c.r.add(OK, name+": notifications", "well formed: %s", countText(counts))
}

// guestRequests reports the guest's requests to the client, which the
// check's client answered with refusals: the guest must have answered its
// call all the same.
func (c *checker) guestRequests(name string, call *callRecord) {
	call.mu.Lock()
	reqs := append([]guestRequest(nil), call.requests...)
	call.mu.Unlock()
	if len(reqs) == 0 {
		return
	}
	var seen, probs []string
	for _, q := range reqs {
		seen = append(seen, fmt.Sprintf("%s (%s)", q.method, cannedText(q.method)))
		if p := requestProblem(q); p != "" {
			probs = append(probs, q.method+": "+p)
		}
	}
	if call.err != nil {
		probs = append(probs, "after the refusal the call failed: "+call.err.Error())
	}
	if len(probs) > 0 {
		c.r.add(Fail, name+": requests to the client", "%s", strings.Join(probs, "; "))
		return
	}
	c.r.add(OK, name+": requests to the client", "%s; the guest answered its call", strings.Join(seen, ", "))
}

// resource reads a resource (or a URI made from a template) and checks the
// answer.
func (c *checker) resource(uri, name string) {
	params, _ := json.Marshal(map[string]string{"uri": uri})
	before := c.rec.count()
	res, rpcErr, err := c.request("resources/read", params)
	calls := c.rec.since(before)
	check := name + ": read"
	switch {
	case err != nil:
		c.r.add(Fail, check, "%v", err)
		return
	case len(calls) != 1:
		c.r.add(Fail, check, "the server called the guest %d times for one read (%s)", len(calls), clientView(res, rpcErr))
		return
	}
	call := calls[0]
	probs := answerProblems(call, rpcErr, strings.HasPrefix(name, "template "), readResultProblems)
	if len(probs) > 0 {
		c.r.add(Fail, check, "%s: %s", uri, strings.Join(probs, "; "))
		return
	}
	if call.reply.Error != nil {
		c.r.add(OK, check, "%s: answered not found (-32602), as the ABI prescribes", uri)
		return
	}
	c.r.add(OK, check, "%s: well-formed contents", uri)
}

// answerProblems lists what is wrong with the guest's answer to one read
// or get: its failure, a JSON-RPC error (but -32602 when notFoundOK),
// what resultProblems finds in its result, the server refusing it, and
// lines written after it.
func answerProblems(call *callRecord, rpcErr *abi.Error, notFoundOK bool, resultProblems func([]byte) []string) []string {
	var probs []string
	switch {
	case call.err != nil:
		probs = append(probs, call.err.Error())
	case call.reply.Error != nil:
		if !(notFoundOK && call.reply.Error.Code == abi.CodeInvalidParams) {
			probs = append(probs, fmt.Sprintf("a JSON-RPC error %d %q", call.reply.Error.Code, call.reply.Error.Message))
		}
	default:
		probs = append(probs, resultProblems(call.reply.Result)...)
		if rpcErr != nil {
			probs = append(probs, "the server refused the answer: "+rpcErr.Message)
		}
	}
	if call.err == nil && call.stats.AfterAnswer > 0 {
		probs = append(probs, fmt.Sprintf("wrote %s after its answer", plural(call.stats.AfterAnswer, "line")))
	}
	return probs
}

// prompt gets a prompt with every argument set and checks the answer.
func (c *checker) prompt(p *abi.Prompt) {
	check := "prompt " + p.Name + ": get"
	args := map[string]string{}
	for _, a := range p.Arguments {
		args[a.Name] = c.complete(map[string]string{"type": "ref/prompt", "name": p.Name}, "prompt "+p.Name, a.Name)
	}
	params, _ := json.Marshal(map[string]any{"name": p.Name, "arguments": args})
	before := c.rec.count()
	res, rpcErr, err := c.request("prompts/get", params)
	calls := c.rec.since(before)
	switch {
	case err != nil:
		c.r.add(Fail, check, "%v", err)
		return
	case len(calls) != 1:
		c.r.add(Fail, check, "the server called the guest %d times for one get (%s)", len(calls), clientView(res, rpcErr))
		return
	}
	call := calls[0]
	probs := answerProblems(call, rpcErr, true, promptResultProblems)
	argText, _ := json.Marshal(args)
	if len(probs) > 0 {
		c.r.add(Fail, check, "arguments %s: %s", argText, strings.Join(probs, "; "))
		return
	}
	if call.reply.Error != nil {
		c.r.add(OK, check, "arguments %s: refused as invalid params (-32602): %s", argText, shortText(call.reply.Error.Message, 120))
		return
	}
	c.r.add(OK, check, "arguments %s: well-formed messages", argText)
}

// complete returns a value for an argument of a prompt or a template
// variable: the first the module's completions offer for an empty prefix,
// else "example". With completions declared, it checks the answer.
func (c *checker) complete(ref map[string]string, item, arg string) string {
	if !c.m.Description().Completions {
		return "example"
	}
	check := item + ": completion of " + arg
	params, _ := json.Marshal(map[string]any{"ref": ref, "argument": map[string]string{"name": arg, "value": ""}})
	before := c.rec.count()
	res, rpcErr, err := c.request("completion/complete", params)
	calls := c.rec.since(before)
	switch {
	case err != nil:
		c.r.add(Fail, check, "%v", err)
		return "example"
	case len(calls) != 1:
		c.r.add(Fail, check, "the server called the guest %d times for one completion (%s)", len(calls), clientView(res, rpcErr))
		return "example"
	}
	call := calls[0]
	switch {
	case call.err != nil:
		c.r.add(Fail, check, "%v", call.err)
		return "example"
	case call.reply.Error != nil:
		if call.reply.Error.Code == abi.CodeInvalidParams {
			c.r.add(OK, check, "refused as invalid params (-32602): %s", shortText(call.reply.Error.Message, 120))
		} else {
			c.r.add(Fail, check, "a JSON-RPC error %d %q", call.reply.Error.Code, call.reply.Error.Message)
		}
		return "example"
	}
	var out struct {
		Completion *struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	if json.Unmarshal(call.reply.Result, &out) != nil || out.Completion == nil || out.Completion.Values == nil {
		c.r.add(Fail, check, "the result is not {completion: {values: [strings]}}: %s", shortText(string(call.reply.Result), 120))
		return "example"
	}
	if rpcErr != nil {
		c.r.add(Fail, check, "the server refused the answer: %s", rpcErr.Message)
		return "example"
	}
	if len(out.Completion.Values) == 0 {
		c.r.add(OK, check, "no values")
		return "example"
	}
	c.r.add(OK, check, "%s, the first used", plural(len(out.Completion.Values), "value"))
	return out.Completion.Values[0]
}

// ids reports whether every answer carried the host's request id.
func (c *checker) ids() {
	calls := c.rec.since(0)
	var wrong []string
	for _, call := range calls {
		var ge *host.GuestError
		if errors.As(call.err, &ge) && ge.Kind == host.KindProtocol && strings.Contains(ge.Msg, "answered with id") {
			wrong = append(wrong, call.method+": "+ge.Msg)
		}
	}
	if len(wrong) > 0 {
		c.r.add(Fail, "ids echoed", "%s", strings.Join(wrong, "; "))
		return
	}
	if len(calls) == 0 {
		c.r.add(Skip, "ids echoed", "the guest was never called")
		return
	}
	c.r.add(OK, "ids echoed", "no answer of %s carried another id", plural(len(calls), "call"))
}

// closedStdin runs the guest with stdin at end of file and no request: it
// must end, neither hang nor trap.
func (c *checker) closedStdin() {
	start := time.Now()
	code, err := c.m.RunClosedStdin(c.ctx)
	took := time.Since(start).Round(time.Millisecond)
	var ge *host.GuestError
	switch {
	case err == nil:
		c.r.add(OK, "closed stdin", "the guest ended (exit code %d) in %s", code, took)
	case errors.As(err, &ge) && ge.Kind == host.KindLimit:
		c.r.add(Fail, "closed stdin", "the guest did not end on end of file: %v", err)
	default:
		c.r.add(Fail, "closed stdin", "%v", err)
	}
}

// limits reports the largest figures of the calls against the module's
// limits; a call that broke one has already failed its check.
func (c *checker) limits() {
	l := c.m.Policy().Limits
	calls := c.rec.since(0)
	var mem uint64
	var out int64
	var slow time.Duration
	var broke []string
	for _, call := range calls {
		mem = max(mem, call.stats.MemoryBytes)
		out = max(out, call.stats.OutputBytes)
		slow = max(slow, call.stats.QueueWait+call.stats.Instantiate+call.stats.Run)
		var ge *host.GuestError
		if errors.As(call.err, &ge) && ge.Kind == host.KindLimit {
			broke = append(broke, call.method+": "+ge.Msg)
		}
	}
	figures := fmt.Sprintf("memory at most %s of %s, output at most %s of %s, slowest call %s of %s",
		host.FormatBytes(int64(mem)), host.FormatBytes(int64(l.MemoryBytes)),
		host.FormatBytes(out), host.FormatBytes(l.OutputBytes), slow.Round(time.Millisecond), l.Timeout)
	if len(broke) > 0 {
		c.r.add(Fail, "limits", "%s; %s", strings.Join(broke, "; "), figures)
		return
	}
	c.r.add(OK, "limits", "%s", figures)
}

// client is the check's MCP client as the server sees it: the stream of
// every request. It answers the guest's requests with refusals: elicitation
// declined, sampling and roots errors.
type client struct {
	sess *protocol.Session
	mu   sync.Mutex
	sent [][]byte
}

func (cl *client) reset() {
	cl.mu.Lock()
	cl.sent = nil
	cl.mu.Unlock()
}

// Send receives what the server sends on the request's stream.
func (cl *client) Send(_ context.Context, msg []byte) error {
	cl.mu.Lock()
	cl.sent = append(cl.sent, append([]byte(nil), msg...))
	cl.mu.Unlock()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" || len(m.ID) == 0 {
		return nil // a notification
	}
	res, rpcErr := canned(m.Method)
	cl.sess.Deliver(&protocol.Message{ID: m.ID, Result: res, Error: rpcErr})
	return nil
}

// canned is the check client's answer to a request from the server.
func canned(method string) ([]byte, *abi.Error) {
	switch method {
	case abi.MethodElicit:
		return []byte(`{"action":"decline"}`), nil
	case abi.MethodSample:
		return nil, &abi.Error{Code: -1, Message: "wasmcp check: the user declined the sampling request"}
	case abi.MethodListRoots:
		return nil, &abi.Error{Code: abi.CodeMethodNotFound, Message: "wasmcp check: the client has no roots"}
	}
	return nil, &abi.Error{Code: abi.CodeMethodNotFound, Message: "wasmcp check: method not found: " + method}
}

// cannedText says how the check's client answers a method.
func cannedText(method string) string {
	switch method {
	case abi.MethodElicit:
		return "declined"
	case abi.MethodSample:
		return "refused with an error"
	case abi.MethodListRoots:
		return "refused with an error"
	}
	return "answered by the host"
}

// warnings is a slog handler keeping the warnings of the catalog (the
// declarations it refuses).
type warnings struct {
	mu    sync.Mutex
	items []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	var parts []string
	r.Attrs(func(a slog.Attr) bool {
		parts = append(parts, a.Key+"="+a.Value.String())
		return true
	})
	w.mu.Lock()
	w.items = append(w.items, r.Message+" ("+strings.Join(parts, " ")+")")
	w.mu.Unlock()
	return nil
}

func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.items...)
}

// fillTemplate makes a URI from an RFC 6570 level-1 template, each
// variable's value given by value.
func fillTemplate(t string, value func(name string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			return b.String()
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:i])
		b.WriteString(url.PathEscape(value(t[i+1 : i+j])))
		t = t[i+j+1:]
	}
}

func rootType(schema []byte) string {
	var s struct {
		Type any `json:"type"`
	}
	_ = json.Unmarshal(schema, &s)
	t, _ := s.Type.(string)
	return t
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func countText(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return strings.Join(parts, ", ")
}

func shortText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func clientView(res json.RawMessage, rpcErr *abi.Error) string {
	if rpcErr != nil {
		return fmt.Sprintf("error %d %s", rpcErr.Code, rpcErr.Message)
	}
	return shortText(string(bytes.TrimSpace(res)), 200)
}
