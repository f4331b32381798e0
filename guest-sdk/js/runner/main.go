// Command runner is the wasmcp JavaScript runner: a Go reactor (package
// guest-sdk/go/reactor) around the goja JavaScript engine that serves the
// tools, resources and prompts a script registers.
//
// The host hands it the script through two environment variables,
// WASMCP_SCRIPT (the JavaScript; TypeScript is turned into JavaScript by
// the host's load-time transform before) and WASMCP_SCRIPT_NAME (the file
// name, for error positions). At start-up — the host's snapshot phase —
// the runner compiles and runs the script, whose top-level code registers
// its tools with `new McpServer(...)`; the snapshot then holds the parsed
// script and everything its top level built, so every call's fresh
// instance starts with the script loaded (docs/design/snapshots.md).
//
// Build (see guest-sdk/js/README.md):
//
//	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o runner.wasm .
package main

import (
	"fmt"
	"os"

	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

// Environment variables the host sets for the runner.
const (
	envScript = "WASMCP_SCRIPT"
	envName   = "WASMCP_SCRIPT_NAME"
)

func init() {
	name := os.Getenv(envName)
	if name == "" {
		name = "script.js"
	}
	src, ok := os.LookupEnv(envScript)
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: no script: the host sets %s to the JavaScript to run\n", name, envScript)
		os.Exit(1)
	}
	// The script's text is not left in the environment the script's
	// code could read; the compiled program holds it.
	_ = os.Unsetenv(envScript)
	r, err := load(name, src)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	reactor.Serve(r.srv)
}

func main() {}
