// Command good is the well-behaved guest of the hostile battery: its calls
// run beside hostile ones and must succeed.
package main

import (
	"time"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

type echoIn struct {
	Text string `json:"text"`
	// SleepMS makes the call last a while, so it overlaps a hostile call.
	SleepMS int `json:"sleep_ms,omitempty"`
}

func main() {
	s := guest.New("good", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "echo", Description: "Answers its text, after sleeping sleep_ms."},
		func(c *guest.Context, in echoIn) (string, error) {
			time.Sleep(time.Duration(in.SleepMS) * time.Millisecond)
			return "echo: " + in.Text, nil
		})
	s.Run()
}
