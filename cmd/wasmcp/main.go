// Command wasmcp serves MCP tools that are WebAssembly modules.
//
//	wasmcp serve --tools DIR [--stdio] [--http ADDR]
//	wasmcp inspect MODULE.wasm
//	wasmcp call MODULE.wasm TOOL 'JSON-ARGS'
//	wasmcp check MODULE.wasm
//	wasmcp cert [--out DIR]
//	wasmcp push MODULE.wasm REF [--sign KEY]
//	wasmcp pull REF [-o DIR]
//	wasmcp approve NAME
//	wasmcp keygen
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `wasmcp runs MCP tools compiled to WebAssembly, each call in a fresh sandbox.

Usage:
  wasmcp serve --tools DIR [--stdio | --http ADDR] [flags]   serve the modules in DIR
  wasmcp inspect MODULE.wasm                                 print a module's description and policy
  wasmcp call MODULE.wasm TOOL 'JSON-ARGS'                   run one tool once, print its result
  wasmcp check MODULE.wasm [--policy FILE] [--json]          check that a module keeps the guest ABI (for tool authors)
  wasmcp cert [--out DIR]                                    write a self-signed TLS certificate for local development
  wasmcp status [--server URL]                               ask a running server for its modules, tools, calls and queues
  wasmcp push MODULE.wasm REF [--sign KEY]                   publish a module (and its policy) to an OCI registry
  wasmcp pull REF [-o DIR] [--key PUB]                       pin a published module by digest in DIR/wasmcp.lock, verified
  wasmcp approve NAME [--digest D] [-o DIR]                  approve the grants a pulled module asks for
  wasmcp keygen [--out PREFIX]                               write a signing key pair for push --sign
  wasmcp new LANG NAME [-o DIR]                              write a new tool (typescript, javascript, go, rust, c)
  wasmcp version                                             print the version

Run 'wasmcp COMMAND --help' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stdin, stdout, stderr)
	case "inspect":
		err = cmdInspect(ctx, args[1:], stdout, stderr)
	case "call":
		err = cmdCall(ctx, args[1:], stdout, stderr)
	case "check":
		err = cmdCheck(ctx, args[1:], stdout, stderr)
	case "cert":
		err = cmdCert(args[1:], stdout, stderr)
	case "status":
		err = cmdStatus(ctx, args[1:], stdout, stderr)
	case "push":
		err = cmdPush(ctx, args[1:], stdout, stderr)
	case "pull":
		err = cmdPull(ctx, args[1:], stdout, stderr)
	case "approve":
		err = cmdApprove(ctx, args[1:], stdout, stderr)
	case "keygen":
		err = cmdKeygen(args[1:], stdout, stderr)
	case "new":
		err = cmdNew(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "wasmcp", buildVersion())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "wasmcp: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errCheckFailed):
		return 1 // the report said why
	}
	fmt.Fprintln(stderr, "wasmcp:", err)
	return 1
}

var errUsage = errors.New("usage")
