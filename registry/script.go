package registry

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/tstransform"
)

// Script files: a NAME.js or NAME.ts file in the tools directory is a
// module whose bytes are the JavaScript runner's (guest-sdk/js/quickjs)
// followed by a custom section naming the script (ScriptSection: the
// SHA-256 of its name and JavaScript), so the module's hash — and with it
// the description cache and the snapshot key — covers runner and script.
// The script reaches the runner through its environment (ScriptEnv,
// ScriptNameEnv), which the snapshot key covers too; the runner runs it
// at start-up, in the host's snapshot phase. A NAME.d.ts file is not a
// tool.

// ScriptSection is the custom section of a script's module.
const ScriptSection = "wasmcp.script"

// The environment variables that hand the script to the runner.
const (
	ScriptEnv     = "WASMCP_SCRIPT"
	ScriptNameEnv = "WASMCP_SCRIPT_NAME"
)

// ScriptTools are what the registry needs to load script files: the
// runner module's bytes. A .ts file is first turned into JavaScript by the
// host's TypeScript transform (transformTS, internal/tstransform); .js
// files never go through it (the runner runs them as they are, so
// positions in their errors are the file's).
type ScriptTools struct {
	Runner func() ([]byte, error)
	// SDK are import paths a bundle resolves to the source given here
	// (wasmcp's stand-in for the official TypeScript SDK), whatever
	// node_modules holds.
	SDK map[string]string
}

var scriptTools atomic.Pointer[ScriptTools]

// SetScriptTools sets how script files are loaded (wasmcp's main sets the
// built-in runner); until it is called, script files are
// refused with an error saying so.
func SetScriptTools(t ScriptTools) {
	scriptTools.Store(&t)
	transforms.reset()
}

// scriptExts are the extensions of script files.
var scriptExts = []string{".js", ".ts"}

// IsScript reports whether a file name names a script (.js or .ts, not
// .d.ts).
func IsScript(name string) bool {
	if strings.HasSuffix(name, ".d.ts") {
		return false
	}
	ext := filepath.Ext(name)
	return ext == ".js" || ext == ".ts"
}

// MaxScriptBytes bounds a script file: larger ones are refused before the
// transform or the runner sees them.
const MaxScriptBytes = 4 << 20

// scriptModule is the module of the script file name whose contents are
// src, and the environment that hands the script to the runner; a .ts is
// transformed first (transformTS).
func scriptModule(ctx context.Context, e *host.Engine, name string, src []byte) ([]byte, []host.EnvVar, error) {
	t := scriptTools.Load()
	if t == nil || t.Runner == nil {
		return nil, nil, errors.New("this wasmcp has no JavaScript runner built in: scripts cannot be loaded")
	}
	base := filepath.Base(name)
	if len(src) > MaxScriptBytes {
		return nil, nil, fmt.Errorf("%s: a script may hold at most %d bytes", base, MaxScriptBytes)
	}
	js := src
	if abs, err := filepath.Abs(name); err == nil && hasNodeModules(filepath.Dir(abs)) {
		out, err := bundleScript(ctx, name, src, t.SDK)
		if errors.Is(err, tstransform.ErrBusy) {
			return nil, nil, host.Busy(err)
		}
		if err != nil {
			return nil, nil, err
		}
		js = out
	} else if strings.HasSuffix(base, ".ts") {
		out, err := transformTS(ctx, base, src)
		if errors.Is(err, tstransform.ErrBusy) {
			return nil, nil, host.Busy(err) // loaded again later, not refused for good
		}
		if err != nil {
			return nil, nil, err
		}
		js = out
	}
	if abs, err := filepath.Abs(name); err == nil && !hasNodeModules(filepath.Dir(abs)) {
		rememberScript(abs, &bundleEntry{})
	}
	if strings.IndexByte(string(js), 0) >= 0 {
		return nil, nil, fmt.Errorf("%s: the script holds a NUL character", base)
	}
	runner, err := t.Runner()
	if err != nil {
		return nil, nil, fmt.Errorf("the JavaScript runner: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(base))
	h.Write([]byte{0})
	h.Write(js)
	wasm := appendCustomSection(append([]byte(nil), runner...), ScriptSection, h.Sum(nil))
	env := []host.EnvVar{{Name: ScriptNameEnv, Value: base}, {Name: ScriptEnv, Value: string(js)}}
	return wasm, env, nil
}

// withScriptEnv is p with env added; the policy's own variables of the
// same names are replaced.
func withScriptEnv(p host.Policy, env []host.EnvVar) host.Policy {
	out := make([]host.EnvVar, 0, len(p.Env)+len(env))
	for _, e := range p.Env {
		if e.Name != ScriptEnv && e.Name != ScriptNameEnv {
			out = append(out, e)
		}
	}
	p.Env = out
	// The runner reads the script once, in its start-up: an instance from
	// the snapshot need not be handed the source again.
	p.StartEnv = env
	// Every script's snapshot splits into the runner's code: one
	// compilation serves them all.
	p.SharedCode = true
	return p
}

// readModule reads a module file: a .wasm as it is, a script as its
// module (with the policy's environment completed).
func readModule(ctx context.Context, e *host.Engine, path string, p host.Policy) ([]byte, host.Policy, error) {
	b, err := readModuleFile(path)
	if err != nil || !IsScript(path) {
		return b, p, err
	}
	wasm, env, err := scriptModule(ctx, e, path, b)
	if err != nil {
		return nil, p, err
	}
	return wasm, withScriptEnv(p, env), nil
}

// appendCustomSection appends a custom section to a module.
func appendCustomSection(wasm []byte, name string, payload []byte) []byte {
	body := appendULEB(nil, uint64(len(name)))
	body = append(body, name...)
	body = append(body, payload...)
	wasm = append(wasm, 0)
	wasm = appendULEB(wasm, uint64(len(body)))
	return append(wasm, body...)
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}
