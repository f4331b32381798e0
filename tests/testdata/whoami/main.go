// Command whoami is a guest for the end-to-end authentication tests: its
// tool answers with what the host put in the request's
// _meta["wasmcp/principal"] (the caller, when the module's policy sets
// expose_principal), or "anonymous".
package main

import (
	"encoding/json"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

func main() {
	s := guest.New("whoami", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "whoami", Description: "Says who the host says is calling."},
		func(c *guest.Context, _ struct{}) (string, error) {
			var m struct {
				Principal json.RawMessage `json:"wasmcp/principal"`
			}
			if json.Unmarshal(c.Meta(), &m) != nil || len(m.Principal) == 0 {
				return "anonymous", nil
			}
			return string(m.Principal), nil
		})
	s.Run()
}
