package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/wasmcp/wasmcp/cmd/wasmcp/internal/buildinfo"
)

// Languages are the names `wasmcp new` takes, each with what it writes.
var languages = map[string]lang{
	"typescript": {files: []file{{"{%.Name%}.ts", tsSource}, {"{%.Name%}.policy.toml", policyStub}},
		next: "wasmcp check {%.Dir%}/{%.Name%}.ts\nwasmcp serve --tools {%.Dir%}"},
	"javascript": {files: []file{{"{%.Name%}.js", jsSource}, {"{%.Name%}.policy.toml", policyStub}},
		next: "wasmcp check {%.Dir%}/{%.Name%}.js\nwasmcp serve --tools {%.Dir%}"},
	"go": {sdk: true, files: []file{{"go.mod", goMod}, {"main.go", goSource}, {"build.sh", goBuild}, {"{%.Name%}.policy.toml", policyStub}},
		next: "(cd {%.Dir%} && ./build.sh) && wasmcp check {%.Dir%}/{%.Name%}.wasm"},
	"rust": {sdk: true, files: []file{{"Cargo.toml", rustCargo}, {"src/main.rs", rustSource}, {"build.sh", rustBuild}, {"{%.Name%}.policy.toml", policyStub}},
		next: "(cd {%.Dir%} && ./build.sh) && wasmcp check {%.Dir%}/{%.Name%}.wasm"},
	"c": {sdk: true, files: []file{{"{%.Name%}.c", cSource}, {"build.sh", cBuild}, {"{%.Name%}.policy.toml", policyStub}},
		next: "(cd {%.Dir%} && ./build.sh) && wasmcp check {%.Dir%}/{%.Name%}.wasm"},
}

var aliases = map[string]string{"ts": "typescript", "js": "javascript", "golang": "go", "rs": "rust"}

type lang struct {
	sdk   bool   // needs a wasmcp checkout's guest-sdk
	files []file // path template → content template
	next  string // what to run next, as a template
}

type file struct{ path, body string }

// Options say what to write and where.
type Options struct {
	Lang string // typescript (ts), javascript (js), go, rust (rs) or c
	Name string // the tool's name: a letter, then letters, digits and _ (at most 64)
	// Dir is where the files go: for a script the tools directory itself
	// (the file is the tool), for a compiled language the new tool's own
	// directory, which must not exist yet or be empty.
	Dir string
	// SDK is a wasmcp checkout, for Go, Rust and C; "" lets Find look.
	SDK string
}

// Result is what New wrote and what to run next.
type Result struct {
	Files []string // the paths written, in order
	Next  string   // the commands that build and check the tool
}

var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// Languages lists the names New takes.
func Languages() []string {
	var l []string
	for k := range languages {
		l = append(l, k)
	}
	sort.Strings(l)
	return l
}

// New writes a new tool's files. It never overwrites a file.
func New(o Options) (*Result, error) {
	name := strings.ToLower(o.Lang)
	if a, ok := aliases[name]; ok {
		name = a
	}
	l, ok := languages[name]
	if !ok {
		return nil, fmt.Errorf("unknown language %q: want one of %s", o.Lang, strings.Join(Languages(), ", "))
	}
	if !namePattern.MatchString(o.Name) {
		return nil, fmt.Errorf("tool name %q: want a letter, then letters, digits or _ (at most 64)", o.Name)
	}
	data := struct{ Name, Dir, SDK string }{Name: o.Name, Dir: o.Dir}
	if l.sdk {
		sdk := o.SDK
		if sdk == "" {
			sdk = Find()
		}
		if sdk == "" {
			return nil, errors.New("the " + name + " SDK is used from a wasmcp checkout (it is not published): " +
				"git clone the wasmcp repository and pass --sdk DIR, or run wasmcp new inside the clone")
		}
		abs, err := filepath.Abs(sdk)
		if err != nil {
			return nil, err
		}
		if !isCheckout(abs) {
			return nil, fmt.Errorf("--sdk %s: not a wasmcp checkout (no guest-sdk/go/go.mod)", sdk)
		}
		data.SDK = abs
		if entries, err := os.ReadDir(o.Dir); err == nil && len(entries) > 0 {
			return nil, fmt.Errorf("%s is not empty: a %s tool gets a directory of its own", o.Dir, name)
		}
	}
	var written []string
	for _, f := range l.files {
		path := filepath.Join(o.Dir, expand(f.path, data))
		body := expand(f.body, data)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(path, ".sh") {
			mode = 0o755
		}
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		_, err = fh.WriteString(body)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		written = append(written, path)
	}
	return &Result{Files: written, Next: expand(l.next, data)}, nil
}

func expand(t string, data any) string {
	var b bytes.Buffer
	template.Must(template.New("").Delims("{%", "%}").Parse(t)).Execute(&b, data)
	return b.String()
}

// Find is the wasmcp checkout `wasmcp new` uses for the Go, Rust and C
// SDKs when --sdk is not given: the one the working directory is in, else
// the one this binary was built from (go run, go build or go install in a
// clone), else "".
func Find() string {
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if isCheckout(d) {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if d := buildinfo.Checkout(); d != "" && isCheckout(d) {
		return d
	}
	return ""
}

func isCheckout(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "guest-sdk", "go", "go.mod"))
	return err == nil && bytes.HasPrefix(b, []byte("module github.com/wasmcp/wasmcp/guest-sdk/go"))
}
