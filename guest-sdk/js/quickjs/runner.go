package quickjs

import _ "embed"

// Runner is the runner module's bytes (runner.wasm). Callers must not
// modify them.
//
//go:embed runner.wasm
var Runner []byte

// Environment variables through which the host hands a script to the
// runner.
const (
	ScriptEnv     = "WASMCP_SCRIPT"      // the JavaScript to run
	ScriptNameEnv = "WASMCP_SCRIPT_NAME" // its file name, for messages
)
