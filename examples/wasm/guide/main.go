// Command guide is a wasmcp module that documents writing wasmcp tools. It
// shows every non-tool feature of the SDK: a resource, a resource template
// with completions, a prompt with an argument completion, and tools that
// ask the client for input (elicitation) and for its roots.
package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

const (
	overviewURI   = "guide://wasmcp/overview"
	topicTemplate = "guide://wasmcp/topics/{topic}"
)

// init registers the tools and hands the server to package reactor: built
// with -buildmode=c-shared (go run ./examples/wasm/build does), the module
// is a reactor the host runs from a snapshot of this start-up, as
// docs/writing-tools.md tells a tool author to build a Go tool.
func init() {
	s := guest.New("guide", "1.0.0",
		guest.WithInstructions("Read guide://wasmcp/overview before writing a wasmcp tool module; topics are under guide://wasmcp/topics/{topic}."))

	s.AddResource(guest.Resource{
		URI:         overviewURI,
		Name:        "overview",
		Title:       "Writing wasmcp tools",
		Description: "How wasmcp runs tools as WebAssembly modules and how to write one.",
		MimeType:    "text/markdown",
	}, func(c *guest.Context, uri string) ([]guest.ResourceContents, error) {
		return []guest.ResourceContents{{Text: overview}}, nil
	})

	s.AddResourceTemplate(guest.ResourceTemplate{
		URITemplate: topicTemplate,
		Name:        "topic",
		Title:       "wasmcp guide topic",
		Description: "One topic of the wasmcp guide: " + strings.Join(topicNames(), ", ") + ".",
		MimeType:    "text/markdown",
	}, func(c *guest.Context, uri string, vars map[string]string) ([]guest.ResourceContents, error) {
		text, ok := topics[vars["topic"]]
		if !ok {
			return nil, &guest.Error{
				Code:    guest.CodeInvalidParams,
				Message: fmt.Sprintf("unknown topic %q; topics: %s", vars["topic"], strings.Join(topicNames(), ", ")),
				Data:    map[string]string{"uri": uri},
			}
		}
		return []guest.ResourceContents{{Text: text}}, nil
	})
	s.AddCompletion(guest.TemplateRef(topicTemplate), "topic",
		func(c *guest.Context, value string, _ map[string]string) ([]string, error) {
			return guest.FilterPrefix(topicNames(), value), nil
		})

	s.AddPrompt(guest.Prompt{
		Name:        "write_tool",
		Title:       "Write a wasmcp tool",
		Description: "Asks the assistant to write a wasmcp tool module in a given language for a given purpose.",
		Arguments: []guest.PromptArgument{
			{Name: "language", Description: "Language of the module: " + strings.Join(languages, ", "), Required: true},
			{Name: "purpose", Description: "What the tool should do", Required: true},
		},
	}, writeTool)
	s.AddCompletion(guest.PromptRef("write_tool"), "language",
		func(c *guest.Context, value string, _ map[string]string) ([]string, error) {
			return guest.FilterPrefix(languages, value), nil
		})

	guest.AddTool(s, guest.Tool{
		Name:  "confirm_plan",
		Title: "Confirm a plan",
		Description: "Shows a plan to the user and asks them to approve or reject it, with an optional comment. " +
			"Use it before doing anything the user should sign off on. Reports whether the user accepted, declined or cancelled.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: new(true), OpenWorldHint: new(false)},
	}, confirmPlan)

	guest.AddTool(s, guest.Tool{
		Name:        "client_roots",
		Title:       "List client roots",
		Description: "Lists the roots (directories or files) the client has shared with the server.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: new(true), OpenWorldHint: new(false)},
	}, clientRoots)

	reactor.Serve(s)
}

// main does not run in a reactor.
func main() {}

var languages = []string{"go", "rust", "c", "zig", "assemblyscript"}

var buildHints = map[string]string{
	"go":             "Use the Go SDK (github.com/wasmcp/wasmcp/guest-sdk/go) and build with `GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags=\"-s -w\" -o tool.wasm .`.",
	"rust":           "Build a binary crate with `cargo build --release --target wasm32-wasip1`; use serde_json for the messages.",
	"c":              "Build with wasi-sdk: `clang --target=wasm32-wasip1 -O2 -o tool.wasm tool.c`; bring a small JSON parser.",
	"zig":            "Build with `zig build-exe -target wasm32-wasi -O ReleaseSmall tool.zig`; std.json handles the messages.",
	"assemblyscript": "Compile with asc to a WASI module (e.g. with the wasi-shim package) exporting _start; keep imports to wasi_snapshot_preview1.",
}

func writeTool(c *guest.Context, args map[string]string) (*guest.PromptResult, error) {
	lang := strings.ToLower(strings.TrimSpace(args["language"]))
	hint, ok := buildHints[lang]
	if !ok {
		return nil, guest.InvalidParams("unsupported language %q; choose one of: %s", args["language"], strings.Join(languages, ", "))
	}
	text := fmt.Sprintf(`Write a wasmcp tool module in %s that does the following:

%s

Requirements:
- The module is a WASI preview 1 command (exports _start) that imports nothing but wasi_snapshot_preview1.
- It reads one JSON-RPC request line from stdin and writes exactly one response line with the same id to stdout.
- It answers wasmcp/describe with {"abiVersion": 1, "name", "version", "tools": [...]}, each tool with a name, a description and an inputSchema of type object.
- It answers tools/call with {"content": [...]}, and reports failures as {"isError": true} with a text content saying why.
- It has no network, no files and no environment; everything it needs arrives in the arguments.
- %s

Give the complete source, the build command, and one example tools/call request with its expected response.`,
		lang, strings.TrimSpace(args["purpose"]), hint)
	return &guest.PromptResult{
		Description: "Write a wasmcp tool in " + lang,
		Messages:    []guest.PromptMessage{guest.UserMessage(text)},
	}, nil
}

// PlanIn is the confirm_plan tool's input.
type PlanIn struct {
	Plan string `json:"plan" jsonschema:"description=The plan to show the user, in a few sentences or a short list"`
}

// approval is the form the user fills in.
type approval struct {
	Approve bool   `json:"approve" jsonschema:"title=Approve,description=Approve the plan?"`
	Comment string `json:"comment,omitempty" jsonschema:"title=Comment,description=Anything the assistant should know"`
}

func confirmPlan(c *guest.Context, in PlanIn) (string, error) {
	if strings.TrimSpace(in.Plan) == "" {
		return "", errors.New("the plan is empty")
	}
	res, err := c.Elicit("Approve this plan?\n\n"+in.Plan, approval{})
	if err != nil {
		return "", fmt.Errorf("could not ask the user: %w", err)
	}
	switch res.Action {
	case guest.ActionAccept:
		var a approval
		if err := res.Decode(&a); err != nil {
			return "", fmt.Errorf("the client sent an unreadable answer: %w", err)
		}
		return fmt.Sprintf("accepted: approve=%t comment=%q", a.Approve, a.Comment), nil
	case guest.ActionDecline:
		return "declined: the user declined to answer; do not go ahead with the plan", nil
	case guest.ActionCancel:
		return "cancelled: the user dismissed the request without answering", nil
	}
	return "", fmt.Errorf("the client answered with unknown action %q", res.Action)
}

func clientRoots(c *guest.Context, _ struct{}) (string, error) {
	roots, err := c.ListRoots()
	if err != nil {
		return "", fmt.Errorf("could not list the client's roots: %w", err)
	}
	if len(roots) == 0 {
		return "The client shares no roots.", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The client shares %d root(s):\n", len(roots))
	for _, r := range roots {
		if r.Name != "" {
			fmt.Fprintf(&b, "- %s (%s)\n", r.URI, r.Name)
		} else {
			fmt.Fprintf(&b, "- %s\n", r.URI)
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func topicNames() []string {
	names := make([]string, 0, len(topics))
	for k := range topics {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

const overview = "# Writing wasmcp tools\n\n" +
	"wasmcp is an MCP server whose tools are WebAssembly modules. The host (wazero) compiles each module once " +
	"and runs **a fresh instance for every request**: nothing survives between two calls.\n\n" +
	"## The contract\n\n" +
	"A module is a WASI preview 1 core module (a *command* exporting `_start`, or a reactor exporting `wasmcp_main`). " +
	"It talks JSON-RPC 2.0, one JSON object per line: requests arrive on stdin, answers go to stdout, " +
	"stderr goes to the host's log.\n\n" +
	"1. At load time the host sends `wasmcp/describe`; the module answers what it offers: tools with JSON Schemas, " +
	"resources, resource templates, prompts, and whether it completes arguments.\n" +
	"2. For each client request (`tools/call`, `resources/read`, `prompts/get`, `completion/complete`) the host starts " +
	"an instance, writes the request line, and reads the answer line.\n" +
	"3. Meanwhile the module may send progress and log notifications, and ask the client for input " +
	"(elicitation), for a model completion (sampling) or for its roots; the answers come back on stdin.\n\n" +
	"## In Go\n\n" +
	"```go\n" +
	"func init() {\n" +
	"\ts := guest.New(\"hello\", \"1.0.0\")\n" +
	"\tguest.AddTool(s, guest.Tool{Name: \"greet\", Description: \"Greets someone.\"},\n" +
	"\t\tfunc(c *guest.Context, in struct{ Name string `json:\"name\"` }) (string, error) {\n" +
	"\t\t\treturn \"Hello, \" + in.Name, nil\n" +
	"\t\t})\n" +
	"\treactor.Serve(s) // package github.com/wasmcp/wasmcp/guest-sdk/go/reactor\n" +
	"}\n\n" +
	"func main() {}\n" +
	"```\n\n" +
	"Build with `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=\"-s -w\" -o hello.wasm .` and drop the file " +
	"into the host's module directory: the host runs every call from a snapshot of the module's start-up. " +
	"(A `main` that calls `s.Run()`, built without `-buildmode=c-shared`, is a command module that starts the Go runtime in every call.)\n\n" +
	"## Rules of thumb\n\n" +
	"- Give every tool a clear description and precise input schema: the model reads them.\n" +
	"- Report failures as tool errors (`isError`), with a message the model can act on.\n" +
	"- Expect no files, no network, no environment: pass data in arguments.\n" +
	"- Stay well inside the limits (memory, time, output size).\n\n" +
	"Topics: guide://wasmcp/topics/abi, sdk, limits, policy.\n"

var topics = map[string]string{
	"abi": "# The guest ABI (v1)\n\n" +
		"- Module: WASI preview 1 core module, imports only `wasi_snapshot_preview1`, exports `memory` and `_start` " +
		"(command) or `wasmcp_main` (reactor, with optional `_initialize`).\n" +
		"- Framing: newline-delimited JSON-RPC 2.0 on stdin/stdout; stderr is free text for the log.\n" +
		"- One instance, one request: read one request line, answer it with the same `id`, exit.\n" +
		"- `wasmcp/describe` carries `abiVersions` (today `[1]`); answer `abiVersion: 1` and the description. " +
		"A module may instead embed the description in a custom section named `wasmcp.describe`.\n" +
		"- Before answering, the guest may write `notifications/progress`, `notifications/message`, and requests " +
		"`elicitation/create`, `sampling/createMessage`, `roots/list` with its own ids; the host writes the answers to stdin.\n" +
		"- Errors: a failing tool answers `isError: true`; an unknown resource is error -32602 with `data.uri`; " +
		"anything else -32603. A trap, a bad line or a missing answer becomes an error the client sees.\n",
	"sdk": "# The Go SDK\n\n" +
		"Import `github.com/wasmcp/wasmcp/guest-sdk/go` (package `guest`).\n\n" +
		"- `guest.New(name, version, guest.WithInstructions(...))` creates the module; `reactor.Serve(s)` in `init` " +
		"(package `guest-sdk/go/reactor`, built with `-buildmode=c-shared`) serves each request from a snapshot, " +
		"or `s.Run()` in `main` as a command module.\n" +
		"- `guest.AddTool(s, tool, func(c *guest.Context, in In) (Out, error))`: the input schema comes from `In`'s " +
		"struct fields (json tags; pointers and `omitempty` are optional; the `jsonschema:\"description=...,enum=a|b\"` tag adds keywords). " +
		"A struct `Out` gives an output schema and structured content; a `string` gives text; `*guest.ToolResult` gives full control.\n" +
		"- Returning an error makes an `isError` result; panics are caught.\n" +
		"- `s.AddResource`, `s.AddResourceTemplate` (RFC 6570 `{var}`), `s.AddPrompt`, `s.AddCompletion`.\n" +
		"- `c.Progress`, `c.Log`, `c.Elicit`, `c.Sample`, `c.ListRoots` talk to the client through the host.\n" +
		"- Test a module natively by feeding request lines to `s.Serve(reader, writer)`.\n",
	"limits": "# Limits\n\n" +
		"The host enforces, per call (operator defaults in parentheses):\n\n" +
		"- linear memory (256 MiB),\n" +
		"- wall-clock time (60 s),\n" +
		"- bytes written to stdout plus stderr (16 MiB), and the length of one line (4 MiB).\n\n" +
		"Hitting a limit ends the instance at once and the client gets an error naming the limit. " +
		"Cancellation also ends the instance without notice, so never rely on running to completion. " +
		"Keep results small: summarize, paginate, or return a resource link instead of megabytes of text.\n",
	"policy": "# Policy\n\n" +
		"Guests are denied everything by default:\n\n" +
		"- no preopened directories (file access fails),\n" +
		"- no environment variables,\n" +
		"- one argument, the module's name,\n" +
		"- no network (WASI preview 1 has none; a later ABI adds a host HTTP function checked against a per-module allow-list).\n\n" +
		"Clocks, random numbers, `sched_yield` and polling stdin work. An operator may grant a module more " +
		"(for example a read-only directory) in its policy; design tools so they work without it.\n",
}
