// Command snapguest is a Go reactor (the SDK's package reactor, built with
// -buildmode=c-shared) for the end-to-end snapshot tests: the host runs it
// from a snapshot of its start-up, and these tools show that every call
// still starts from that state.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

// version is set at build time (-X main.version=...) for the reload test.
var version = "1"

// calls is 41 after start-up; every call must see 41 before it counts.
var calls int

type none struct{}

func init() {
	calls = 41
	s := guest.New("snapguest", version)
	guest.AddTool(s, guest.Tool{Name: "count", TaskSupport: "optional", Description: "Counts calls in a package-level variable."},
		func(c *guest.Context, _ none) (string, error) {
			calls++
			return fmt.Sprintf("v%s:%d", version, calls), nil
		})
	guest.AddTool(s, guest.Tool{Name: "random", Description: "16 bytes from crypto/rand, in hex."},
		func(c *guest.Context, _ none) (string, error) {
			b := make([]byte, 16)
			if _, err := rand.Read(b); err != nil {
				return "", err
			}
			return hex.EncodeToString(b), nil
		})
	guest.AddTool(s, guest.Tool{Name: "ask", Description: "Elicits a name and greets it."},
		func(c *guest.Context, _ none) (string, error) {
			r, err := c.Elicit("Your name?", map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}})
			if err != nil {
				return "", err
			}
			calls++
			return fmt.Sprintf("hello %v (%d)", r.Content["name"], calls), nil
		})
	guest.AddTool(s, guest.Tool{Name: "spin", TaskSupport: "optional", Description: "Reports progress, then spins forever."},
		func(c *guest.Context, _ none) (string, error) {
			c.Progress(1, 2, "spinning")
			for i := 0; ; i++ {
				calls += i
			}
		})
	reactor.Serve(s)
}

func main() {}
