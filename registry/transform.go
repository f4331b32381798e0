package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/wasmcp/wasmcp/internal/regfile"
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

// Bundles: a script with a node_modules directory beside it in the tools
// directory is bundled with what it imports (tstransform.Bundle: the same
// child, confined to the tools directory). A bundle is cached by the path
// of its script and kept while its script and every file it read hash as
// they did; scriptStale tells the registry when they no longer do, so
// that a reload sees an edit in node_modules.

// MaxBundleBytes bounds what a bundle may read: the script and every file
// it imports, added up.
const MaxBundleBytes = 16 << 20

// nodeModules is the directory whose presence beside a script makes it a
// bundle.
const nodeModules = "node_modules"

// bundles holds each script's last bundle, by its absolute path.
var bundles = struct {
	sync.Mutex
	out map[string]*bundleEntry
}{out: map[string]*bundleEntry{}}

// bundleEntry is a script's last load: whether it was bundled and, if
// so, its bundle (or the bundler's refusal) and the files it read.
type bundleEntry struct {
	bundled bool
	src     [32]byte
	inputs  []tstransform.Input
	js      []byte
	err     error
}

// hasNodeModules reports whether dir holds a node_modules directory (a
// link to one counts: the bundler's confinement judges what it reaches).
func hasNodeModules(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, nodeModules))
	return err == nil && st.IsDir()
}

// fresh reports whether every input still hashes as it did.
func (b *bundleEntry) fresh(root string) bool {
	dir, err := os.OpenRoot(root)
	if err != nil {
		return false
	}
	defer dir.Close()
	for _, in := range b.inputs {
		data, err := regfile.ReadIn(dir, filepath.FromSlash(in.Path), MaxBundleBytes)
		if err != nil {
			return false
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != in.Sum {
			return false
		}
	}
	return true
}

// bundleScript bundles the script at path (its text src) with the
// node_modules beside it, or answers the cached bundle while it is fresh.
// A refusal (an *tstransform.Error) is cached like a bundle; a failure of
// the child is not.
func bundleScript(ctx context.Context, path string, src []byte, aliases map[string]string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	root, base := filepath.Dir(abs), filepath.Base(abs)
	sum := bundleKey(src, aliases)
	bundles.Lock()
	b := bundles.out[abs]
	bundles.Unlock()
	if b != nil && b.bundled && b.err == nil && b.src == sum && b.fresh(root) {
		return b.js, nil
	}
	out, err := tstransform.Bundle(ctx, base, src, tstransform.BundleOptions{Root: root, Aliases: aliases, MaxInput: MaxBundleBytes})
	var refused *tstransform.Error
	if err != nil && !errors.As(err, &refused) {
		return nil, err
	}
	// A refusal is recorded (scriptStale then tries the script again at
	// every reload: what it misses may have been installed since) but
	// never answered from the cache.
	b = &bundleEntry{bundled: true, src: sum, err: err}
	if out != nil {
		b.js, b.inputs = out.Code, out.Inputs
	}
	rememberScript(abs, b)
	return b.js, b.err
}

// bundleKey is the hash of a script's text and the aliases it is bundled
// with.
func bundleKey(src []byte, aliases map[string]string) [32]byte {
	h := sha256.New()
	h.Write(src)
	for _, k := range slices.Sorted(maps.Keys(aliases)) {
		fmt.Fprintf(h, "\x00%d:%s%d:%s", len(k), k, len(aliases[k]), aliases[k])
	}
	return [32]byte(h.Sum(nil))
}

// rememberScript records the last load of the script at abs.
func rememberScript(abs string, b *bundleEntry) {
	bundles.Lock()
	defer bundles.Unlock()
	if len(bundles.out) >= maxCachedTransforms {
		clear(bundles.out)
	}
	bundles.out[abs] = b
}

// scriptStale reports whether the script at path must be loaded again
// though its file did not change: node_modules appeared or went away
// beside it, or a file its bundle read changed.
func scriptStale(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	bundles.Lock()
	b := bundles.out[abs]
	bundles.Unlock()
	if b == nil {
		return false
	}
	root := filepath.Dir(abs)
	if hasNodeModules(root) != b.bundled {
		return true
	}
	return b.bundled && (b.err != nil || !b.fresh(root))
}
