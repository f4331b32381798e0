//go:build !command

package main

import "github.com/wasmcp/wasmcp/guest-sdk/go/reactor"

func init() { reactor.Serve(newServer()) }

// main does not run in a reactor.
func main() {}
