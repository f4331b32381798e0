package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

func cmdCall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	var ef engineFlags
	ef.register(fs)
	if err := parseFlags(fs, args, stdout, stderr, `Usage: wasmcp call [flags] MODULE.wasm TOOL ['JSON-ARGS']

Runs one tool of a module once, in a fresh instance under the module's
policy, and prints the CallToolResult as JSON. Progress and log
notifications go to stderr; requests to a client (elicitation, sampling,
roots) are refused, since there is no client. Exits 1 when the result has
isError set.

Flags:
`); err != nil {
		return err
	}
	if fs.NArg() < 2 || fs.NArg() > 3 {
		fs.Usage()
		return errUsage
	}
	argsJSON := []byte("{}")
	if fs.NArg() == 3 {
		argsJSON = []byte(fs.Arg(2))
	}
	if !json.Valid(argsJSON) {
		return fmt.Errorf("JSON-ARGS is not valid JSON: %s", argsJSON)
	}
	engine, m, err := ef.loadModule(ctx, fs.Arg(0), stderr)
	if err != nil {
		return err
	}
	defer engine.Close(context.Background())
	tool := fs.Arg(1)
	s, ok := m.Schemas(tool)
	if !ok {
		return fmt.Errorf("module %s has no tool %q", m.Name(), tool)
	}
	if err := s.Input.ValidateJSON(argsJSON, true); err != nil {
		return fmt.Errorf("invalid arguments for %s: %v", tool, err)
	}
	params, _ := json.Marshal(map[string]any{
		"name": tool, "arguments": json.RawMessage(argsJSON),
		"_meta": map[string]any{"progressToken": "cli"},
	})
	reply, err := m.Call(ctx, abi.MethodToolsCall, params, cliPeer{stderr})
	if err != nil {
		return err
	}
	if reply.Error != nil {
		return fmt.Errorf("tool error %d: %s", reply.Error.Code, reply.Error.Message)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, reply.Result, "", "  "); err != nil {
		return fmt.Errorf("module answered invalid JSON: %w", err)
	}
	fmt.Fprintln(stdout, pretty.String())
	var res struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(reply.Result, &res)
	if res.IsError {
		return fmt.Errorf("the tool reported an error")
	}
	return nil
}

// cliPeer prints a guest's notifications and refuses its client requests.
type cliPeer struct{ w io.Writer }

func (p cliPeer) Notify(_ context.Context, method string, params []byte) {
	fmt.Fprintf(p.w, "%s %s\n", method, params)
}

func (p cliPeer) Request(_ context.Context, method string, _ []byte) ([]byte, error) {
	return nil, &abi.Error{Code: -32601, Message: "wasmcp call has no client to answer " + method}
}

var _ contract.Peer = cliPeer{}
