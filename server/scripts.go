package server

import (
	"fmt"
	"os"
	"sync"

	"github.com/wasmcp/wasmcp/internal/jsbuild"
	"github.com/wasmcp/wasmcp/registry"
)

// runnerEnv names a JavaScript runner module (built from
// guest-sdk/js/runner) that script files run on, in place of the one built
// into wasmcp: for work on the runner itself.
const runnerEnv = "WASMCP_JS_RUNNER"

func init() {
	registry.SetScriptTools(registry.ScriptTools{Runner: runner})
}

// runner is the runner named by $WASMCP_JS_RUNNER (read once), or else
// the built-in one (internal/jsbuild).
var runner = sync.OnceValues(func() ([]byte, error) {
	path := os.Getenv(runnerEnv)
	if path == "" {
		return jsbuild.Runner()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", runnerEnv, err)
	}
	return b, nil
})
