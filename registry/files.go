package registry

import (
	"github.com/wasmcp/wasmcp/internal/regfile"
)

// Every file the registry reads from the tools directory is read through
// internal/regfile: opened without blocking, refused unless it is a
// regular file, and never read past its cap (a FIFO, a link to
// /dev/zero or a sparse file of gigabytes cannot stall or swell a load).
const (
	// MaxModuleBytes bounds a .wasm module file, as a pulled module
	// layer is bounded by default.
	MaxModuleBytes = 256 << 20
	// MaxPolicyBytes bounds a policy file.
	MaxPolicyBytes = 1 << 20
	// maxCABundleBytes bounds a policy's http.ca_bundle file.
	maxCABundleBytes = 4 << 20
	// maxSecretFileBytes bounds a header value read from a file.
	maxSecretFileBytes = 64 << 10
	// maxIndexBytes bounds the tools index (a line per file).
	maxIndexBytes = 64 << 20
)

// readModuleFile reads a module file: a script at most MaxScriptBytes,
// a .wasm at most MaxModuleBytes.
func readModuleFile(path string) ([]byte, error) {
	if IsScript(path) {
		return regfile.Read(path, MaxScriptBytes)
	}
	return regfile.Read(path, MaxModuleBytes)
}

// readPolicyFile reads a policy file, at most MaxPolicyBytes.
func readPolicyFile(path string) ([]byte, error) {
	return regfile.Read(path, MaxPolicyBytes)
}
