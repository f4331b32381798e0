package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/wasmcp/wasmcp/cmd/wasmcp/internal/check"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/registry"
)

// errCheckFailed ends `wasmcp check` with status 1 once the report is
// printed; the report says why.
var errCheckFailed = errors.New("check failed")

func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var ef engineFlags
	ef.register(fs)
	policy := fs.String("policy", "", "policy file to load the module with (default: NAME.policy.toml beside the module, if any)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args, stdout, stderr, `Usage: wasmcp check [flags] MODULE.wasm

Checks that a module keeps the guest ABI, for tool authors. Loads it as
'wasmcp serve' would (the same validation, schema compilation and policy),
then serves it to a client in the process: the description is valid and
every declaration is served; every tool answers a call with arguments
generated from its input schema, with a well-formed result that matches its
output schema; arguments the schema refuses never reach the guest; answers
carry the request's id; nothing is written after the answer; notifications
are well formed; elicitation, sampling and roots requests from the guest get
refusals (decline, errors) and the guest still answers; every resource
reads and every prompt gets (templates and prompts with the first value the
module's completions offer, else "example"); the guest ends when its stdin
is closed; no call breaks a limit. Prints one line per check (ok, FAIL or skip, with the reason) and
exits 1 if any check failed. A schema the generator cannot satisfy is a
skip, not a failure.

Flags:
`); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	file := fs.Arg(0)
	ef.runAfterAnswer = true             // to see what a guest writes after its answer
	engine, err := ef.engine(io.Discard) // guest stderr and host logs are not the report
	if err != nil {
		return err
	}
	defer engine.Close(context.Background())
	policyFile := *policy
	if policyFile == "" {
		policyFile = policyFileIfExists(file)
	}
	var m *host.Module
	if *policy != "" {
		m, err = registry.LoadFileWithPolicy(ctx, engine, file, *policy)
	} else {
		m, err = registry.LoadFile(ctx, engine, file)
	}
	var report *check.Report
	if err != nil {
		report = check.LoadFailed(file, err)
	} else {
		report = check.Run(ctx, m, check.Options{File: file, PolicyFile: policyFile})
	}
	if *asJSON {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if report.Failed() {
		return errCheckFailed
	}
	return nil
}
