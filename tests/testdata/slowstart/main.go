// Command slowstart is the guest of the start-up tests: every instance
// sleeps before it serves, its describe run at load included, so its module
// takes at least that long to load. The delay is set at build time
// (go build -ldflags "-X main.delay=6s").
package main

import (
	"time"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// delay is how long each instance sleeps before serving.
var delay = "6s"

type none struct{}

func main() {
	if d, err := time.ParseDuration(delay); err == nil {
		time.Sleep(d)
	}
	s := guest.New("slowstart", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "slow_hello", Description: "Says hello after the instance's start-up delay."},
		func(c *guest.Context, _ none) (string, error) {
			return "hello from slowstart", nil
		})
	s.Run()
}
