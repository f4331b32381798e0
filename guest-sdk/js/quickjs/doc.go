// Package quickjs holds the JavaScript runner every script tool runs on:
// QuickJS built for wasm32-wasi with its C glue (c/runner.c) and the
// JavaScript half of the API (c/prelude.js), as one reactor module that
// never changes per script. The module is committed (runner.wasm, about
// 0.9 MB) so that a fresh clone and `go install` serve scripts with no
// build step; build.sh rebuilds it byte for byte from its inputs, and
// TestRunnerIsFresh checks that it does.
//
// The script reaches the runner as data: the host sets WASMCP_SCRIPT (the
// JavaScript) and WASMCP_SCRIPT_NAME in its environment, the runner
// evaluates it in the host's snapshot run (wasmcp_snapshot), and every
// call starts from that snapshot (docs/design/scripts.md).
package quickjs
