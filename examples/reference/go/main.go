// Command reference is the reference tool set written with the Go guest
// SDK: the same tools, resource and prompt, with the same names, schemas
// and texts, as every other SDK's examples/reference/<lang>. The shared
// suite tests/reference_test.go runs `wasmcp check` on it and drives it
// over stdio and HTTP.
package main

import (
	"encoding/json"
	"errors"
	"strconv"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

const (
	echoIn      = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	echoOut     = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	sumIn       = `{"type":"object","properties":{"numbers":{"type":"array","items":{"type":"number"}}},"required":["numbers"]}`
	sumOut      = `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`
	progressIn  = `{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":20}},"required":["steps"]}`
	askIn       = `{"type":"object"}`
	nameSchema  = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	greetingURI = "ref://greeting"
)

func main() {
	s := guest.New("reference", "1.0.0")

	s.AddRawTool(guest.Tool{Name: "echo", Description: "Returns its text.",
		InputSchema: echoIn, OutputSchema: echoOut}, echo)
	s.AddRawTool(guest.Tool{Name: "sum", Description: "Adds up an array of numbers.",
		InputSchema: sumIn, OutputSchema: sumOut}, sum)
	s.AddRawTool(guest.Tool{Name: "progress", Description: "Reports progress in the given number of steps.",
		InputSchema: progressIn}, progress)
	s.AddRawTool(guest.Tool{Name: "ask", Description: "Asks the user for their name and greets them.",
		InputSchema: askIn}, ask)

	s.AddResource(guest.Resource{URI: greetingURI, Name: "greeting", MimeType: "text/plain"},
		func(c *guest.Context, uri string) ([]guest.ResourceContents, error) {
			return []guest.ResourceContents{{URI: uri, MimeType: "text/plain", Text: "hello from the reference tools"}}, nil
		})
	s.AddPrompt(guest.Prompt{Name: "greet", Description: "Asks the assistant to greet someone.",
		Arguments: []guest.PromptArgument{{Name: "name", Description: "who to greet", Required: true}}},
		func(c *guest.Context, args map[string]string) (*guest.PromptResult, error) {
			return &guest.PromptResult{Messages: []guest.PromptMessage{guest.UserMessage("Say hello to " + args["name"] + ".")}}, nil
		})

	s.Run()
}

func echo(c *guest.Context, args json.RawMessage) (*guest.ToolResult, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	return &guest.ToolResult{Content: []guest.Content{guest.Text(in.Text)},
		StructuredContent: map[string]string{"text": in.Text}}, nil
}

func sum(c *guest.Context, args json.RawMessage) (*guest.ToolResult, error) {
	var in struct {
		Numbers []float64 `json:"numbers"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	total := 0.0
	for _, n := range in.Numbers {
		total += n
	}
	text, err := json.Marshal(total) // a JSON number: 6, 2.5
	if err != nil {
		return nil, err // NaN or ±Inf cannot come from JSON numbers' sum short of overflow
	}
	return &guest.ToolResult{Content: []guest.Content{guest.Text(string(text))},
		StructuredContent: map[string]float64{"sum": total}}, nil
}

func progress(c *guest.Context, args json.RawMessage) (*guest.ToolResult, error) {
	var in struct {
		Steps int `json:"steps"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	for i := 1; i <= in.Steps; i++ {
		c.Progress(float64(i), float64(in.Steps), "")
	}
	return guest.TextResult("done " + strconv.Itoa(in.Steps)), nil
}

func ask(c *guest.Context, _ json.RawMessage) (*guest.ToolResult, error) {
	res, err := c.ElicitKey("name", "What is your name?", nameSchema)
	var ce *guest.ClientError
	switch {
	case errors.As(err, &ce):
		return guest.ErrorResult(ce.Message), nil
	case err != nil:
		return nil, err
	}
	if res.Action == "accept" {
		if name, ok := res.Content["name"].(string); ok {
			return guest.TextResult("hello " + name), nil
		}
	}
	return guest.TextResult("no name given"), nil
}
