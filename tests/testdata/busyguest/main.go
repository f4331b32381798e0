// Command busyguest is an honest Go reactor (the SDK's package reactor,
// built with -buildmode=c-shared) for the busy-machine tests: built once
// per name (-X main.name=...), each copy is a distinct module with tools
// of its own, so each is described and snapshotted at load.
package main

import (
	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

// name is set at build time (-X main.name=...).
var name = "busy"

type args struct {
	Text string `json:"text"`
}

func init() {
	s := guest.New(name, "1")
	guest.AddTool(s, guest.Tool{Name: name + "_echo", Description: "Echoes its text."},
		func(c *guest.Context, a args) (string, error) { return name + ":" + a.Text, nil })
	reactor.Serve(s)
}

func main() {}
