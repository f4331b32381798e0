package guest_test

import (
	"fmt"
	"os"
	"strings"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

type AddIn struct {
	A float64 `json:"a" jsonschema:"description=First addend"`
	B float64 `json:"b" jsonschema:"description=Second addend"`
}

type AddOut struct {
	Sum float64 `json:"sum"`
}

// A typed tool: the input schema comes from AddIn, the output schema from
// AddOut, and the result carries structuredContent plus its JSON as text.
func ExampleAddTool() {
	s := guest.New("calc", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "add", Description: "Adds two numbers."},
		func(c *guest.Context, in AddIn) (AddOut, error) {
			return AddOut{Sum: in.A + in.B}, nil
		})

	req := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}` + "\n"
	s.Serve(strings.NewReader(req), os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"sum\":42}"}],"structuredContent":{"sum":42}}}
}

// A handler error is a tool error result, not a JSON-RPC error.
func ExampleAddTool_error() {
	s := guest.New("calc", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "div", Description: "Divides a by b."},
		func(c *guest.Context, in AddIn) (string, error) {
			if in.B == 0 {
				return "", fmt.Errorf("division by zero")
			}
			return fmt.Sprint(in.A / in.B), nil
		})

	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"div","arguments":{"a":1,"b":0}}}`
	s.Serve(strings.NewReader(req), os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"division by zero"}],"isError":true}}
}

// The description a module answers at load time.
func ExampleServer_Serve_describe() {
	type EchoIn struct {
		Text  string `json:"text" jsonschema:"description=What to echo"`
		Times int    `json:"times,omitempty" jsonschema:"minimum=1,maximum=5,default=1"`
	}
	s := guest.New("echo", "0.1.0", guest.WithInstructions("Echoes text."))
	guest.AddTool(s, guest.Tool{
		Name:        "echo",
		Description: "Repeats the text.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: new(true)},
	}, func(c *guest.Context, in EchoIn) (string, error) {
		return strings.Repeat(in.Text, max(in.Times, 1)), nil
	})

	req := `{"jsonrpc":"2.0","id":0,"method":"wasmcp/describe","params":{"abiVersions":[1]}}`
	s.Serve(strings.NewReader(req), os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","id":0,"result":{"abiVersion":1,"name":"echo","version":"0.1.0","instructions":"Echoes text.","tools":[{"name":"echo","description":"Repeats the text.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"What to echo"},"times":{"type":"integer","default":1,"minimum":1,"maximum":5}},"required":["text"]},"annotations":{"readOnlyHint":true}}]}}
}

// A resource template: the SDK matches the URI and extracts the variables.
func ExampleServer_AddResourceTemplate() {
	s := guest.New("notes", "1.0.0")
	s.AddResourceTemplate(guest.ResourceTemplate{URITemplate: "notes://{folder}/{id}", Name: "note", MimeType: "text/plain"},
		func(c *guest.Context, uri string, vars map[string]string) ([]guest.ResourceContents, error) {
			if vars["folder"] != "inbox" {
				return nil, guest.ResourceNotFound(uri)
			}
			return []guest.ResourceContents{{Text: "note " + vars["id"] + " in " + vars["folder"]}}, nil
		})

	s.Serve(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"notes://inbox/a%20b"}}`), os.Stdout)
	s.Serve(strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"notes://trash/1"}}`), os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"notes://inbox/a%20b","mimeType":"text/plain","text":"note a b in inbox"}]}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"resource not found: notes://trash/1","data":{"uri":"notes://trash/1"}}}
}

// A prompt with a required argument.
func ExampleServer_AddPrompt() {
	s := guest.New("prompts", "1.0.0")
	s.AddPrompt(guest.Prompt{
		Name:        "review",
		Description: "Reviews code.",
		Arguments:   []guest.PromptArgument{{Name: "code", Required: true}},
	}, func(c *guest.Context, args map[string]string) (*guest.PromptResult, error) {
		return &guest.PromptResult{Messages: []guest.PromptMessage{guest.UserMessage("Review this:\n" + args["code"])}}, nil
	})

	s.Serve(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"review","arguments":{"code":"x := 1"}}}`), os.Stdout)
	s.Serve(strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"review"}}`), os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"description":"Reviews code.","messages":[{"role":"user","content":{"type":"text","text":"Review this:\nx := 1"}}]}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"prompt review: missing required argument \"code\"","data":{"argument":"code"}}}
}

// Completions for a prompt argument.
func ExampleServer_AddCompletion() {
	s := guest.New("prompts", "1.0.0")
	s.AddPrompt(guest.Prompt{Name: "greet", Arguments: []guest.PromptArgument{{Name: "lang"}}},
		func(c *guest.Context, args map[string]string) (*guest.PromptResult, error) { return nil, nil })
	s.AddCompletion(guest.PromptRef("greet"), "lang",
		func(c *guest.Context, value string, _ map[string]string) ([]string, error) {
			return guest.FilterPrefix([]string{"go", "rust", "ruby"}, value), nil
		})

	s.Serve(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"lang","value":"r"}}}`), os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"completion":{"values":["rust","ruby"],"total":2,"hasMore":false}}}
}

// Progress goes to the request's progress token; log messages carry the
// module name as logger.
func ExampleContext_Progress() {
	s := guest.New("worker", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "work", Description: "Works in two steps."},
		func(c *guest.Context, _ struct{}) (string, error) {
			c.Log(guest.LevelInfo, "starting")
			c.Progress(1, 2, "half way")
			c.Progress(2, 2, "")
			return "done", nil
		})

	s.Serve(strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"p1"}}}`), os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"worker","data":"starting"}}
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2,"message":"half way"}}
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":2,"total":2}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}
}

// Elicitation: the guest writes a request to stdout and reads the answer
// (here the second input line) from stdin.
func ExampleContext_Elicit() {
	type Approval struct {
		Approve bool `json:"approve" jsonschema:"description=Go ahead?"`
	}
	s := guest.New("deployer", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "deploy", Description: "Deploys after confirmation."},
		func(c *guest.Context, _ struct{}) (string, error) {
			res, err := c.Elicit("Deploy now?", Approval{})
			if err != nil {
				return "", err
			}
			var a Approval
			if err := res.Decode(&a); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s: approve=%v", res.Action, a.Approve), nil
		})

	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"approve":true}}}` + "\n"
	s.Serve(strings.NewReader(in), os.Stdout)
	// Output:
	// {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Deploy now?","requestedSchema":{"type":"object","properties":{"approve":{"type":"boolean","description":"Go ahead?"}},"required":["approve"]}}}
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"accept: approve=true"}]}}
}
