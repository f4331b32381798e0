package registry

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"

	"github.com/wasmcp/wasmcp/internal/tstransform"
)

// The TypeScript transform: esbuild's Go API, linked into the host and
// run in a child process of it (internal/tstransform: its own CPU-time
// limit and stack bound, so a hostile .ts ends the child, never the
// server), on the operator's own file of at most MaxScriptBytes. What it
// answers is only ever run in the runner's sandbox, as the script's own
// code would be. Results are cached by the hash of name and source, so
// the cost is paid once per file version, at load, never on a call.

// transforms holds the last transforms' results.
var transforms transformCache

type transformCache struct {
	mu  sync.Mutex
	out map[[32]byte]transformResult
}

type transformResult struct {
	js  []byte
	err error
}

// maxCachedTransforms bounds the results kept (a result is at most a few
// times MaxScriptBytes; the scripts of one tools directory are few).
const maxCachedTransforms = 64

func (c *transformCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out = nil
}

// transformTS turns the TypeScript src of the file name into CommonJS
// JavaScript. A syntax error is an error whose text is one line per
// problem, FILE:LINE:COL: message. Answers (JavaScript or syntax errors)
// are cached; a failure of the child (its CPU time, its stack, the wall
// ceiling) is not, so the next load tries again.
func transformTS(ctx context.Context, name string, src []byte) ([]byte, error) {
	key := sha256.Sum256([]byte(name + "\x00" + string(src)))
	transforms.mu.Lock()
	r, ok := transforms.out[key]
	transforms.mu.Unlock()
	if ok {
		return r.js, r.err
	}
	js, err := tstransform.Transform(ctx, name, src)
	var syntax *tstransform.Error
	if err != nil && !errors.As(err, &syntax) {
		return nil, err
	}
	r = transformResult{js: js, err: err}
	transforms.mu.Lock()
	if transforms.out == nil || len(transforms.out) >= maxCachedTransforms {
		transforms.out = map[[32]byte]transformResult{}
	}
	transforms.out[key] = r
	transforms.mu.Unlock()
	return r.js, r.err
}
