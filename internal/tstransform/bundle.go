package tstransform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/evanw/esbuild/pkg/api"
)

// A bundle is a script together with the packages it imports from the
// node_modules directory beside it, as one JavaScript program. It is made
// by esbuild's Build API in the same child process as a transform (its
// CPU time, stack and wall ceiling), confined to the tools directory by
// this package's own resolver and loader (an esbuild plugin that sees
// every import): an import resolves only to a regular file whose real
// path (links followed) is inside the directory; absolute import paths
// and Node built-ins are refused at load; every file is read through an
// os.Root of the directory (readIn: a link out of it fails) and counted
// against MaxInput; tsconfig.json files are never read
// (TsconfigRaw). What esbuild's resolver reads by itself (package.json,
// Yarn's PnP manifests) is checked first by preflight: it reads these
// unbounded and not through the os.Root. It still lists the tools
// directory's parents and reads their package.json (the operator's).

// Input is one file a bundle was made of: its path relative to the tools
// directory (slash-separated) and the SHA-256 of its bytes, in hex.
type Input struct {
	Path string `json:"path"`
	Sum  string `json:"sum"`
}

// Bundled is a bundle's JavaScript and every file it read.
type Bundled struct {
	Code   []byte
	Inputs []Input
}

// BundleOptions say what a bundle may read and what it gets instead.
type BundleOptions struct {
	// Root is the tools directory: nothing outside it is read.
	Root string
	// Aliases are import paths served by source given here, whatever
	// node_modules holds (wasmcp's stand-in for the official SDK).
	Aliases map[string]string
	// MaxInput bounds the bytes of every file read, added up.
	MaxInput int64
}

// bundleGrowth bounds a bundle's answer: bundleGrowth times MaxInput, and
// a MiB (bundling adds little; lowering to ES2017 some).
const bundleGrowth = 4

// Bundle turns the script file name (a base name, directly in
// opts.Root), whose text is src, and what it imports into one program for
// the runner. Its top level runs in an async function handed to the
// runner's topLevel, so that it may await. It returns an *Error when
// esbuild or the confinement refuses something (one line per problem,
// FILE:LINE:COL: message), another error when the child failed.
func Bundle(ctx context.Context, name string, src []byte, opts BundleOptions) (*Bundled, error) {
	if opts.MaxInput <= 0 {
		return nil, errors.New("tstransform: a bundle needs a MaxInput")
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, err
	}
	req := request{Name: name, Source: string(src), CPUSeconds: cpuSeconds, Root: root, Aliases: opts.Aliases, MaxInput: opts.MaxInput}
	a, err := run(ctx, name, req, bundleGrowth*opts.MaxInput+1<<20)
	if err != nil {
		return nil, err
	}
	return &Bundled{Code: []byte(a.Code), Inputs: a.Inputs}, nil
}

// Namespaces of the plugin's modules that are not files.
const (
	nsAlias   = "wasmcp-alias"   // an alias's source
	nsWasmcp  = "wasmcp-api"     // the runner's module "wasmcp"
	nsMissing = "wasmcp-missing" // zod for the SDK stand-in when there is none
	nsEntry   = "wasmcp-entry"   // the entry that imports the script
)

// resolving marks the plugin's own calls to esbuild's resolver.
type resolving struct{}

// builtins are Node's built-in modules: a script has none of them.
var builtins = map[string]bool{}

func init() {
	for _, m := range strings.Fields(`assert assert/strict async_hooks buffer child_process cluster console constants
		crypto dgram diagnostics_channel dns dns/promises domain events fs fs/promises http http2 https inspector
		inspector/promises module net os path path/posix path/win32 perf_hooks process punycode querystring readline
		readline/promises repl stream stream/consumers stream/promises stream/web string_decoder sys timers
		timers/promises tls trace_events tty url util util/types v8 vm wasi worker_threads zlib`) {
		builtins[m] = true
	}
}

// confined is the plugin's state for one bundle. esbuild calls the
// plugin's callbacks from several goroutines at once: mu guards what
// they change.
type confined struct {
	root    string   // the real path of the tools directory
	dir     *os.Root // the tools directory, to read in
	mu      sync.Mutex
	max     int64  // bytes left to read
	entry   string // the script's real path
	source  string // its text, as the parent read it
	aliases map[string]string
	sources map[string]string // an alias's module id → its source
	inputs  map[string]string // path relative to root → SHA-256
}

// inside is the path relative to the root of a real path inside it, or
// an error naming the file and saying why not.
func (c *confined) inside(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(c.root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("it is outside the tools directory (%s)", p)
	}
	return rel, nil
}

func (c *confined) plugin() api.Plugin {
	return api.Plugin{Name: "wasmcp-confine", Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(args api.OnResolveArgs) (api.OnResolveResult, error) {
			if _, ok := args.PluginData.(resolving); ok {
				return api.OnResolveResult{}, nil // the plugin's own call: esbuild resolves
			}
			return c.resolve(b, args)
		})
		b.OnLoad(api.OnLoadOptions{Filter: ".*"}, func(args api.OnLoadArgs) (api.OnLoadResult, error) {
			return c.load(args)
		})
	}}
}

func (c *confined) resolve(b api.PluginBuild, args api.OnResolveArgs) (api.OnResolveResult, error) {
	p := args.Path
	switch {
	case args.Namespace == nsEntry:
		// The script itself: read by the parent (a link to it is the
		// operator's), its imports resolved from the tools directory.
		return api.OnResolveResult{Path: c.entry, Namespace: "file"}, nil
	case args.Kind == api.ResolveEntryPoint:
		return api.OnResolveResult{Path: p, Namespace: nsEntry}, nil
	case p == "wasmcp":
		return api.OnResolveResult{Path: p, Namespace: nsWasmcp}, nil
	case c.aliases[p] != "":
		// Paths with one source are one module (one instance of it).
		sum := sha256.Sum256([]byte(c.aliases[p]))
		id := hex.EncodeToString(sum[:8])
		c.mu.Lock()
		c.sources[id] = c.aliases[p]
		c.mu.Unlock()
		return api.OnResolveResult{Path: id, Namespace: nsAlias}, nil
	case strings.HasPrefix(p, "node:"):
		return api.OnResolveResult{}, builtinError(p)
	case strings.HasPrefix(p, "@modelcontextprotocol/sdk/") || strings.HasPrefix(p, "@modelcontextprotocol/server/"):
		return api.OnResolveResult{}, fmt.Errorf("%q: wasmcp serves only McpServer, ResourceTemplate (server/mcp.js), StdioServerTransport (server/stdio.js) and McpError, ErrorCode (types.js) of the official SDK", p)
	case filepath.IsAbs(p) || path.IsAbs(p):
		return api.OnResolveResult{}, fmt.Errorf("%q: absolute import paths are refused: import from the tools directory or node_modules", p)
	}
	dir := args.ResolveDir
	if dir == "" {
		dir = c.root
	}
	r := b.Resolve(p, api.ResolveOptions{Importer: args.Importer, Namespace: "file", ResolveDir: dir, Kind: args.Kind, PluginData: resolving{}})
	if len(r.Errors) > 0 {
		if args.Namespace == nsAlias && p == "zod" {
			return api.OnResolveResult{Path: p, Namespace: nsMissing}, nil
		}
		if builtins[p] {
			// A package of that name in node_modules (a polyfill) is
			// used; without one it is Node's.
			return api.OnResolveResult{}, builtinError(p)
		}
		return api.OnResolveResult{}, fmt.Errorf("cannot find %q (from %s): install it in node_modules beside the script", p, c.rel(args.Importer))
	}
	if r.External || r.Namespace != "file" {
		return api.OnResolveResult{}, fmt.Errorf("%q resolved to something that is not a file", p)
	}
	if _, err := c.inside(r.Path); err != nil {
		return api.OnResolveResult{}, fmt.Errorf("%q is refused: %v", p, err)
	}
	real, _ := filepath.EvalSymlinks(r.Path)
	return api.OnResolveResult{Path: real, Namespace: "file"}, nil
}

func builtinError(p string) error {
	return fmt.Errorf("%q is a Node built-in: a wasmcp script has no Node APIs (no file system, process or sockets; fetch under its policy)", p)
}

// rel is a path for messages: relative to the root when inside it.
func (c *confined) rel(p string) string {
	if r, err := filepath.Rel(c.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func (c *confined) load(args api.OnLoadArgs) (api.OnLoadResult, error) {
	switch args.Namespace {
	case nsEntry:
		s := fmt.Sprintf("import %q;\n", "./"+filepath.Base(c.entry))
		return api.OnLoadResult{Contents: &s, ResolveDir: c.root, Loader: api.LoaderJS}, nil
	case nsWasmcp:
		// The runner's own module, through its require (not resolved
		// again by esbuild).
		s := `module.exports = globalThis.require("wasmcp");`
		return api.OnLoadResult{Contents: &s, Loader: api.LoaderJS}, nil
	case nsAlias:
		c.mu.Lock()
		s := c.sources[args.Path]
		c.mu.Unlock()
		// Its imports (zod) are the script's: resolved from the root.
		return api.OnLoadResult{Contents: &s, ResolveDir: c.root, Loader: api.LoaderJS}, nil
	case nsMissing:
		s := ""
		return api.OnLoadResult{Contents: &s, Loader: api.LoaderJS}, nil
	case "file":
	default:
		return api.OnLoadResult{}, fmt.Errorf("%s:%s is not a file", args.Namespace, args.Path)
	}
	var b []byte
	rel, err := filepath.Base(c.entry), error(nil)
	c.mu.Lock()
	left := c.max
	c.mu.Unlock()
	if args.Path == c.entry {
		b = []byte(c.source)
	} else {
		if rel, err = c.inside(args.Path); err != nil {
			return api.OnLoadResult{}, fmt.Errorf("refused: %v", err)
		}
		b, err = readIn(c.dir, rel, left)
		if errors.Is(err, errTooLarge) {
			return api.OnLoadResult{}, fmt.Errorf("%s: the script and what it imports are more than the bytes a bundle may read", filepath.ToSlash(rel))
		}
		if err != nil {
			return api.OnLoadResult{}, fmt.Errorf("%s: %v", filepath.ToSlash(rel), err)
		}
	}
	loader, ok := loaderOf(rel)
	if !ok {
		return api.OnLoadResult{}, fmt.Errorf("%s: a script imports only .ts, .js, .mjs, .cjs, .mts, .cts and .json files", filepath.ToSlash(rel))
	}
	sum := sha256.Sum256(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(len(b)) > c.max {
		return api.OnLoadResult{}, fmt.Errorf("%s: the script and what it imports are more than the bytes a bundle may read", filepath.ToSlash(rel))
	}
	c.max -= int64(len(b))
	c.inputs[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
	if err := c.manifests(rel); err != nil {
		return api.OnLoadResult{}, err
	}
	s := string(b)
	return api.OnLoadResult{Contents: &s, ResolveDir: filepath.Dir(args.Path), Loader: loader}, nil
}

// manifests adds to the inputs the package.json of every directory from
// the file rel up to the root, those esbuild read to find and load it (a
// package's "main", "exports", "type"): an edit of one is an edit of the
// bundle. c.mu is held.
func (c *confined) manifests(rel string) error {
	for dir := filepath.Dir(rel); ; dir = filepath.Dir(dir) {
		name := filepath.Join(dir, "package.json")
		if _, seen := c.inputs[filepath.ToSlash(name)]; !seen {
			b, err := readIn(c.dir, name, c.max)
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case errors.Is(err, errTooLarge):
				return fmt.Errorf("%s: the script and what it imports are more than the bytes a bundle may read", filepath.ToSlash(name))
			case err != nil:
				return fmt.Errorf("%s: %v", filepath.ToSlash(name), err)
			default:
				c.max -= int64(len(b))
				sum := sha256.Sum256(b)
				c.inputs[filepath.ToSlash(name)] = hex.EncodeToString(sum[:])
			}
		}
		if dir == "." || dir == string(filepath.Separator) {
			return nil
		}
	}
}

// errTooLarge is a file past what a bundle may still read.
var errTooLarge = errors.New("larger than allowed")

// readIn reads the regular file name inside dir, at most max bytes: it is
// opened without blocking (a FIFO), through the os.Root (a link out of
// the directory fails), checked on the open descriptor, and read through
// a limit (a file that grows while read is refused, never read whole).
func readIn(dir *os.Root, name string, max int64) ([]byte, error) {
	f, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if st.Size() > max {
		return nil, errTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errTooLarge
	}
	return b, nil
}

// loaderOf is the loader of a file by its extension.
func loaderOf(name string) (api.Loader, bool) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".ts", ".mts", ".cts":
		return api.LoaderTS, true
	case ".js", ".mjs", ".cjs":
		return api.LoaderJS, true
	case ".json":
		return api.LoaderJSON, true
	}
	return api.LoaderNone, false
}

// bundle is the child's side of Bundle.
func bundle(in request) (string, []Input, []string) {
	fail := func(err error) (string, []Input, []string) {
		return "", nil, []string{path.Base(in.Name) + ": " + err.Error()}
	}
	root, err := filepath.EvalSymlinks(in.Root)
	if err != nil {
		return fail(err)
	}
	dir, err := os.OpenRoot(root)
	if err != nil {
		return fail(err)
	}
	defer dir.Close()
	if lines := preflight(root, in.MaxInput); len(lines) > 0 {
		return "", nil, lines
	}
	c := &confined{root: root, dir: dir, max: in.MaxInput, entry: filepath.Join(root, path.Base(in.Name)),
		source: in.Source, aliases: in.Aliases, sources: map[string]string{}, inputs: map[string]string{}}
	res := api.Build(api.BuildOptions{
		EntryPoints:      []string{"wasmcp:entry"},
		Bundle:           true,
		Write:            false,
		Format:           api.FormatESModule,
		Platform:         api.PlatformNeutral,
		MainFields:       []string{"module", "main"},
		Conditions:       []string{"module"},
		Target:           api.ES2017,
		Supported:        map[string]bool{"top-level-await": true, "bigint": true},
		Charset:          api.CharsetUTF8,
		LogLevel:         api.LogLevelSilent,
		AbsWorkingDir:    root,
		MinifyWhitespace: true,
		MinifySyntax:     true,
		TsconfigRaw:      "{}",
		// Libraries test NODE_ENV; a script has no process to ask.
		Define:  map[string]string{"process.env.NODE_ENV": `"production"`},
		Plugins: []api.Plugin{c.plugin()},
	})
	if len(res.Errors) > 0 {
		lines := make([]string, 0, len(res.Errors))
		for _, m := range res.Errors {
			lines = append(lines, bundlePosition(in.Name, m)+m.Text)
		}
		return "", nil, lines
	}
	if len(res.OutputFiles) != 1 {
		return fail(fmt.Errorf("esbuild made %d outputs", len(res.OutputFiles)))
	}
	inputs := make([]Input, 0, len(c.inputs))
	for p, s := range c.inputs {
		inputs = append(inputs, Input{Path: p, Sum: s})
	}
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].Path < inputs[j].Path })
	// The top level runs in an async function, so that it may await; the
	// runner waits for it before the load ends.
	code := "require(\"wasmcp\").topLevel((async () => {\"use strip\";\n" + string(res.OutputFiles[0].Contents) + "\n})());\n"
	return code, inputs, nil
}

// bundlePosition is "FILE:LINE:COL: " of a bundle's message, FILE
// relative to the tools directory; a plugin's refusal names the import.
func bundlePosition(name string, m api.Message) string {
	if m.Location == nil || m.Location.File == "" {
		return path.Base(name) + ": "
	}
	f := m.Location.File
	if i := strings.Index(f, ":"); i >= 0 && strings.HasPrefix(f, "wasmcp") {
		f = f[i+1:]
	}
	return fmt.Sprintf("%s:%d:%d: ", filepath.ToSlash(f), m.Location.Line, m.Location.Column+1)
}

// esbuildReads are the files esbuild's resolver reads by itself, beside
// the plugin's loader: a package's manifest and Yarn's PnP manifests.
var esbuildReads = map[string]bool{"package.json": true, ".pnp.data.json": true, ".pnp.cjs": true, ".pnp.js": true}

// preflight checks, before a build, what esbuild would read outside the
// plugin's loader (it reads these with no bound, not through the
// os.Root): in the tools directory root, every file of a name in
// esbuildReads must be a regular file inside root of at most max bytes
// (not a FIFO, a device, a link out), and no link under a node_modules
// may lead to a directory outside root. It answers one line per problem.
func preflight(root string, max int64) []string {
	var lines []string
	refuse := func(p, why string) {
		rel, _ := filepath.Rel(root, p)
		lines = append(lines, filepath.ToSlash(rel)+": "+why)
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root || len(lines) >= 20 {
			return nil
		}
		name := d.Name()
		isLink := d.Type()&fs.ModeSymlink != 0
		if !esbuildReads[name] && !(isLink && underNodeModules(root, p)) {
			return nil
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil // a dangling link: esbuild skips it too
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(root, real)
		outside := err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
		switch {
		case st.IsDir() && outside:
			refuse(p, "it is outside the tools directory (a link to "+real+")")
		case st.IsDir() || !esbuildReads[name]:
		case outside:
			refuse(p, "it is outside the tools directory (a link to "+real+")")
		case !st.Mode().IsRegular():
			refuse(p, "is not a regular file")
		case st.Size() > max:
			refuse(p, fmt.Sprintf("is more than the %d bytes a bundle may read", max))
		}
		return nil
	})
	return lines
}

// underNodeModules reports whether p, inside root, is under a directory
// named node_modules.
func underNodeModules(root, p string) bool {
	rel, err := filepath.Rel(root, filepath.Dir(p))
	if err != nil {
		return false
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == "node_modules" {
			return true
		}
	}
	return false
}
