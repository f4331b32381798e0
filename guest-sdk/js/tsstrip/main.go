// Command tsstrip is wasmcp's load-time TypeScript transform: a Go reactor
// (package guest-sdk/go/reactor) around esbuild's Go API that turns a
// script file's TypeScript (or JavaScript with `import`/`export`) into
// the CommonJS JavaScript the runner (guest-sdk/js/runner) runs.
//
// The host runs it like any guest, in a fresh sandboxed instance under a
// deadline and a memory cap, when it loads a .ts file (registry/script.go
// and internal/jsbuild): the host itself gains no parser, and the
// transform's output is only ever run inside the runner's sandbox. It is a
// separate module from the runner so that the runner — instantiated on
// every call — stays small.
//
// Its one tool, transform {name, source}, answers the JavaScript as text,
// or a tool error whose text is one line per problem, FILE:LINE:COL:
// message (columns counted from 1, in UTF-8 bytes as esbuild counts them).
//
// Build (go generate ./internal/jsbuild does it):
//
//	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o tsstrip.wasm .
package main

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/evanw/esbuild/pkg/api"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

// In is the transform tool's input.
type In struct {
	Name   string `json:"name" jsonschema:"description=The script's file name (NAME.ts or NAME.js), for positions in errors and the loader"`
	Source string `json:"source" jsonschema:"description=The script's text"`
}

func init() {
	s := guest.New("tsstrip", "1.0.0")
	guest.AddTool(s, guest.Tool{
		Name:        "transform",
		Description: "Turns a TypeScript or JavaScript module into CommonJS JavaScript for the wasmcp runner.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
	}, func(_ *guest.Context, in In) (*guest.ToolResult, error) {
		js, err := transform(in.Name, in.Source)
		if err != nil {
			return guest.ErrorResult(err.Error()), nil
		}
		return guest.TextResult(js), nil
	})
	// The first transform builds esbuild's tables; doing one here leaves
	// them built in the snapshot every load starts from.
	_, _ = transform("warm.ts", "const a: number = 1; export default a;")
	reactor.Serve(s)
}

// transform strips the types of src (a .ts name) or only rewrites its
// modules (a .js name) into CommonJS. ES2017 is what the goja engine runs:
// later syntax (object spread, optional chaining, ...) is lowered.
func transform(name, src string) (string, error) {
	loader := api.LoaderJS
	if strings.HasSuffix(name, ".ts") {
		loader = api.LoaderTS
	}
	res := api.Transform(src, api.TransformOptions{
		Loader:     loader,
		Format:     api.FormatCommonJS,
		Target:     api.ES2017,
		Sourcefile: name,
		// Keep the script's own line breaks where esbuild can, so a
		// runtime error's position stays near the source's.
		MinifyWhitespace: false,
		Charset:          api.CharsetUTF8,
		LogLevel:         api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		lines := make([]string, 0, len(res.Errors))
		for _, m := range res.Errors {
			lines = append(lines, position(name, m)+m.Text)
		}
		return "", errors.New(strings.Join(lines, "\n"))
	}
	return string(res.Code), nil
}

// position is "FILE:LINE:COL: " of a message (LINE and COL from 1).
func position(name string, m api.Message) string {
	if m.Location == nil {
		return path.Base(name) + ": "
	}
	return fmt.Sprintf("%s:%d:%d: ", path.Base(name), m.Location.Line, m.Location.Column+1)
}

func main() {}
