package main

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/wasmcp/wasmcp/registry"
)

// runnerEnv names a JavaScript runner module (built from
// guest-sdk/js/runner) that script files run on, in place of the one built
// into wasmcp: for work on the runner itself.
const runnerEnv = "WASMCP_JS_RUNNER"

func init() {
	registry.SetScriptTools(registry.ScriptTools{Runner: fileRunner})
}

// fileRunner reads the runner named by $WASMCP_JS_RUNNER, once.
var fileRunner = sync.OnceValues(func() ([]byte, error) {
	path := os.Getenv(runnerEnv)
	if path == "" {
		return nil, errors.New("no JavaScript runner is built into this wasmcp; set " + runnerEnv + " to a runner module (guest-sdk/js/runner)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", runnerEnv, err)
	}
	return b, nil
})
