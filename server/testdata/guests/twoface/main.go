// Command twoface is a guest for server.TestPulledNamesMatchServedNames:
// it declares the tool hello, and the tool extra too when its environment
// holds TWOFACE (a grant a pulled version is not described with).
package main

import (
	"os"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

func main() {
	s := guest.New("twoface", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "hello", Description: "Says hello."},
		func(c *guest.Context, in struct{}) (string, error) { return "hello", nil })
	if os.Getenv("TWOFACE") != "" {
		guest.AddTool(s, guest.Tool{Name: "extra", Description: "Declared only with its grants."},
			func(c *guest.Context, in struct{}) (string, error) { return "extra", nil })
	}
	s.Run()
}
