package server

import (
	"fmt"
	"os"
	"sync"

	"github.com/wasmcp/wasmcp/guest-sdk/js/quickjs"
	"github.com/wasmcp/wasmcp/registry"
)

// runnerEnv names a JavaScript runner module (built by
// guest-sdk/js/quickjs/build.sh) that script files run on, in place of the one built
// into wasmcp: for work on the runner itself.
const runnerEnv = "WASMCP_JS_RUNNER"

func init() {
	registry.SetScriptTools(registry.ScriptTools{Runner: runner, SDK: quickjs.SDKAliases()})
}

// runner is the runner named by $WASMCP_JS_RUNNER (read once), or else
// the built-in one (guest-sdk/js/quickjs).
var runner = sync.OnceValues(func() ([]byte, error) {
	path := os.Getenv(runnerEnv)
	if path == "" {
		return quickjs.Runner, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", runnerEnv, err)
	}
	return b, nil
})
