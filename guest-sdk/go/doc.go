// Package guest is the Go SDK for writing wasmcp tool modules: WebAssembly
// guests that the wasmcp host runs to serve MCP tools, resources, resource
// templates, prompts and completions. It implements the guest side of the
// wasmcp guest ABI v1 (abi/README.md in the wasmcp repository) and depends
// on the standard library only.
//
// # A module
//
//	package main
//
//	import guest "github.com/wasmcp/wasmcp/guest-sdk/go"
//
//	type GreetIn struct {
//		Name string `json:"name" jsonschema:"description=Who to greet"`
//	}
//
//	func main() {
//		s := guest.New("hello", "1.0.0")
//		guest.AddTool(s, guest.Tool{Name: "greet", Description: "Greets someone."},
//			func(c *guest.Context, in GreetIn) (string, error) {
//				return "Hello, " + in.Name + "!", nil
//			})
//		s.Run()
//	}
//
// Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -ldflags="-s -w" -o hello.wasm .
//
// # The module
//
// The SDK is a Go module of its own, github.com/wasmcp/wasmcp/guest-sdk/go,
// not a package of the wasmcp module. Until it is published, a tool's
// go.mod replaces it and abi with a clone's directories (README.md in this
// directory; `wasmcp new go NAME` writes such a go.mod), and the tool's
// module graph (go.sum, go mod tidy, vulnerability scanners)
// holds the SDK and github.com/wasmcp/wasmcp/abi and nothing else — not the
// host's runtime, JSON library, task store or test dependencies. abi is
// the wire contract (method names, the describe types, the ABI version),
// kept as its own standard-library-only module because the host imports
// it too: host and guests agree on one definition instead of two copies
// that could drift. Both modules require Go 1.26, the release the rest of
// wasmcp is written for.
//
// Versions: a release tags abi/vX.Y.Z and guest-sdk/go/vX.Y.Z at the same
// commit; the SDK's go.mod requires abi at that version. Inside the
// repository, replace directives point both at the checkout (for the SDK's
// own tests, the root module and each example under examples/wasm, which is
// a module of its own so it uses the SDK exactly as a tool does). A module
// that requires the SDK ignores those directives. The repository's
// tests/sdkmodule_test.go checks this the way a user meets it: it serves
// both modules from the checkout through a file-based module proxy, follows
// docs/writing-tools.md ("Writing a tool", Go) in an empty directory outside the
// repository, checks the tool's module graph and serves the tool.
//
// # Module shape
//
// The SDK builds a module two ways; both answer one request per instance,
// in a fresh instance that is thrown away afterwards.
//
// A reactor that runs from a snapshot (package reactor, the recommended
// shape): register everything at init time and hand the server to
// reactor.Serve, build with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hello.wasm .
//
// The host runs the Go runtime's start-up and the init functions once, at
// load, and starts every call's instance from the state they left: a call
// no longer pays the runtime's start-up (milliseconds of CPU). A snapshot
// freezes what start-up computed: math/rand's and math/rand/v2's
// top-level functions and map iteration order repeat in every call, while
// crypto/rand differs in every call. Package reactor's documentation lists
// what that means for a tool.
//
// A command (exporting _start, the shape GOOS=wasip1 go build makes with
// no extra flags): main registers everything and calls Server.Run, which
// serves the single request and returns, and the module exits 0. The Go
// runtime starts in every instance.
//
// # How a request is served
//
// Run reads one JSON-RPC request line from stdin and writes one response
// line to stdout. For wasmcp/describe it answers the module's Description,
// built from what was registered; it refuses (error -32602) a host whose
// abiVersions do not include 1 and assumes 1 when the host lists none.
// tools/call, resources/read, prompts/get and completion/complete go to the
// registered handlers; other methods get -32601. Before the response a
// handler may write notifications (Context.Progress, Context.Log) and
// requests to the client (Context.Elicit, Context.Sample,
// Context.ListRoots), whose answers the host writes back on stdin. Every
// message is one line. Stderr is free text for the host's log; the SDK
// writes panic stacks there.
//
// All input and output goes through Server.Serve, which takes any
// io.Reader and io.Writer: the SDK compiles and is tested natively, and a
// module can be unit-tested by feeding request lines to Serve.
//
// # Errors
//
// A tool whose handler returns an error (or panics) answers a
// CallToolResult with isError true and the error text, so the model sees
// what went wrong; an unknown tool is a JSON-RPC error -32602. Two tool
// errors are JSON-RPC errors instead: a *ClientError saying the client
// lacks a capability (CodeMissingCapability, -32021, which MCP prescribes
// when a server cannot do without it), and an error made with
// ProtocolError. Resource,
// prompt and completion handlers answer JSON-RPC errors: an *Error they
// return is sent as is (ResourceNotFound, InvalidParams), any other error
// or a panic as -32603. An unknown resource URI is -32602 with data
// {"uri": ...}; a missing required prompt argument is -32602.
//
// # Input from the client across round trips
//
// Under MCP 2026-07-28 a server never sends requests to the client: the
// host turns the requests a guest waits for into an input_required result,
// and the client answers them by retrying the call, which runs the guest
// again from the start in a fresh instance. The host answers, on that run,
// every request whose key (its JSON-RPC id) the client has answered. So a
// guest should ask the same questions under the same keys on every run —
// ElicitKey, SampleKey and ListRootsKey name them, and the SDK's own
// numbering is stable for a guest that asks in a fixed order — and should
// send every question it can before waiting for any (StartElicit,
// StartSample, StartListRoots, WaitAll), so the client gets them in one
// round. A guest that needs more than its questions' answers carries its
// own state with SetState and State. ClientCapabilities tells what the
// client declared; a request it cannot answer fails with
// CodeMissingCapability, and the guest may fall back to another one.
//
// # Schemas from Go types
//
// AddTool generates a tool's inputSchema from its input type and, for
// struct outputs, its outputSchema (see SchemaFor for the type mapping). A
// struct becomes an object whose properties are its exported fields, named
// and embedded as encoding/json does; a field is required unless it is a
// pointer or its json tag has omitempty or omitzero. The `jsonschema`
// struct tag adds keywords, as comma-separated key=value items:
//
//	description=TEXT      the property's description
//	title=TEXT            its title
//	enum=a|b|c            allowed values (for an array: of its items)
//	default=VALUE         the default value
//	minimum=N, maximum=N, exclusiveMinimum=N, exclusiveMaximum=N
//	minLength=N, maxLength=N, minItems=N, maxItems=N
//	pattern=REGEXP        (for an array: of its items)
//	format=NAME           e.g. date-time, uri, email
//	required, optional    override the field's requiredness
//
// Values of enum and default are converted to the property's type (number,
// integer, boolean; JSON for arrays and objects). A comma separates items
// only when the text after it starts with one of these keys, so
// descriptions may contain commas: `jsonschema:"description=Start, end and
// step,minimum=0"` has a description and a minimum.
//
// In an output schema, fields json.Marshal may write as null (nil
// pointers, slices and maps without omitempty) are typed [T, "null"], so
// that structuredContent validates against outputSchema.
//
// # URI templates
//
// Resource templates are RFC 6570 level 1: {name} expressions in literal
// text. The host routes a resources/read to the module owning a matching
// template; the SDK matches the URI against its templates again, in
// registration order, to pick the handler and extract the variables. A
// variable matches one or more characters other than '/', '?' and '#'
// and is percent-decoded.
package guest
