// Command httpguest is the guest of the HTTP transport's tests: a tool that
// reports progress, logs and asks the client through elicitation; tools
// that sleep or spin; and a tool whose arguments are mirrored into Mcp-Param-*
// headers (x-mcp-header annotations).
package main

import (
	"fmt"
	"time"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

type none struct{}

// spun keeps the busy loop from being optimized away.
var spun int

type sleepIn struct {
	MS int `json:"ms"`
}

type regionIn struct {
	Region string `json:"region"`
	Count  *int   `json:"count"`
	Strict *bool  `json:"strict"`
	Where  *struct {
		Zone string `json:"zone"`
	} `json:"where"`
}

const regionSchema = `{
  "type": "object",
  "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "count": {"type": "integer", "x-mcp-header": "Count"},
    "strict": {"type": "boolean", "x-mcp-header": "Strict"},
    "where": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
    "ratio": {"type": "number", "x-mcp-header": "Ratio"}
  },
  "required": ["region"]
}`

func main() {
	s := guest.New("httpguest", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "ask", Description: "Reports progress, logs, elicits a name and greets it."},
		func(c *guest.Context, _ none) (string, error) {
			c.Progress(1, 2, "asking")
			c.Log("info", "asking for a name")
			r, err := c.Elicit("Your name?", map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}})
			if err != nil {
				return "", err
			}
			c.Progress(2, 2, "done")
			return fmt.Sprintf("%s: hello %v", r.Action, r.Content["name"]), nil
		})
	guest.AddTool(s, guest.Tool{Name: "steps", Description: "Reports three progress steps and logs, then answers."},
		func(c *guest.Context, _ none) (string, error) {
			for i := 1; i <= 3; i++ {
				c.Progress(float64(i), 3, fmt.Sprint("step ", i))
				c.Log("info", fmt.Sprint("step ", i))
			}
			return "stepped", nil
		})
	guest.AddTool(s, guest.Tool{Name: "sleep", Description: "Sleeps ms milliseconds."},
		func(c *guest.Context, in sleepIn) (string, error) {
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return "slept", nil
		})
	guest.AddTool(s, guest.Tool{Name: "spin", Description: "Busy-loops ms milliseconds (cancellable, unlike a sleep)."},
		func(c *guest.Context, in sleepIn) (string, error) {
			c.Progress(0, 1, "spinning") // tells a client with a progress token that the call runs
			end := time.Now().Add(time.Duration(in.MS) * time.Millisecond)
			for n := 0; time.Now().Before(end); n++ {
				spun += n
			}
			return "spun", nil
		})
	guest.AddTool(s, guest.Tool{Name: "region", Description: "Echoes its arguments; region, count, strict and where.zone are mirrored in headers.", InputSchema: regionSchema},
		func(c *guest.Context, in regionIn) (string, error) {
			return "region=" + in.Region, nil
		})
	s.Run()
}
