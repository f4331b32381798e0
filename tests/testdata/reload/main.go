// Command reload is the guest of the hot-reload tests. The tests build it
// twice with different versions (go build -ldflags "-X main.version=v2") so
// that replacing the module in a served directory is visible: in the tool
// descriptions (tools/list changes) and in every call's result.
package main

import (
	"time"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// version is set at build time.
var version = "v1"

type slowIn struct {
	MS int `json:"ms" jsonschema:"description=Milliseconds to sleep"`
}

type none struct{}

func main() {
	s := guest.New("reload", version)
	guest.AddTool(s, guest.Tool{Name: "reload_version", Description: "Reports the module's version (" + version + ")."},
		func(c *guest.Context, _ none) (string, error) {
			return "version " + version, nil
		})
	guest.AddTool(s, guest.Tool{Name: "reload_slow", Description: "Sleeps ms milliseconds, then reports the version (" + version + ")."},
		func(c *guest.Context, in slowIn) (string, error) {
			c.Progress(0, 1, "sleeping on "+version) // tells the test the call runs
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return "slow done on " + version, nil
		})
	s.AddResource(guest.Resource{URI: "reload://version", Name: "version", MimeType: "text/plain"},
		func(c *guest.Context, uri string) ([]guest.ResourceContents, error) {
			return []guest.ResourceContents{{Text: version}}, nil
		})
	s.AddPrompt(guest.Prompt{Name: "reload_prompt", Description: "Says which version answers (" + version + ")."},
		func(c *guest.Context, _ map[string]string) (*guest.PromptResult, error) {
			return &guest.PromptResult{Messages: []guest.PromptMessage{guest.UserMessage("version " + version)}}, nil
		})
	s.Run()
}
