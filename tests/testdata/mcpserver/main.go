// Command mcpserver is an ordinary MCP server written with the official Go
// SDK (github.com/modelcontextprotocol/go-sdk) and its stdio transport,
// exactly as one would write it to run as a local process. Nothing in it
// knows of wasmcp: the end-to-end tests build it with GOOS=wasip1 and serve
// it as a guest (tests/mcpserver_test.go).
package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// calls counts the tool calls this process has served: a server run as a
// long-lived process would see it grow, a wasmcp guest sees 1 every time.
var calls int

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type echoOut struct {
	Text   string `json:"text"`
	Length int    `json:"length"`
}

func echo(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
	calls++
	return nil, echoOut{Text: in.Text, Length: len(in.Text)}, nil
}

type countIn struct{}

type countOut struct {
	Calls int `json:"calls"`
}

func count(ctx context.Context, req *mcp.CallToolRequest, _ countIn) (*mcp.CallToolResult, countOut, error) {
	calls++
	return nil, countOut{Calls: calls}, nil
}

type askIn struct {
	Question string `json:"question"`
}

func ask(ctx context.Context, req *mcp.CallToolRequest, in askIn) (*mcp.CallToolResult, any, error) {
	calls++
	_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "ask", Data: "asking: " + in.Question})
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
		Message: in.Question,
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}},
			"required":   []string{"name"},
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("elicitation failed: %w", err)
	}
	text := "no name given"
	if res.Action == "accept" {
		if name, ok := res.Content["name"].(string); ok {
			text = "hello " + name
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

type progressIn struct {
	Steps int `json:"steps"`
}

func progress(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
	calls++
	if tok := req.Params.GetProgressToken(); tok != nil {
		for i := 1; i <= in.Steps; i++ {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps)})
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done %d", in.Steps)}}}, nil, nil
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdkserver", Version: "0.1.0"},
		&mcp.ServerOptions{Instructions: "A server written with the official Go SDK."})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text with its length."}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "How many calls this process has served."}, count)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user a question."}, ask)
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress."}, progress)
	s.AddResource(&mcp.Resource{URI: "sdk://greeting", Name: "greeting", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from the Go SDK"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "sdk://shout/{word}", Name: "shout", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			word := strings.TrimPrefix(req.Params.URI, "sdk://shout/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: strings.ToUpper(word)}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"] + "."}}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
