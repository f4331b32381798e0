// Command callheavy is the call-heavy guest of the deadline benchmark
// (host/deadline_bench_test.go): fib recurses, spin loops. wazero's
// deadline checks sit at loop headers, and Go's wasm backend gives every
// function one, so Go code pays per call as well as per iteration.
package main

import (
	"fmt"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

type nIn struct {
	N int `json:"n"`
}

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	s := guest.New("callheavy", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "fib", Description: "fib(n), recursively."},
		func(c *guest.Context, in nIn) (string, error) {
			return fmt.Sprint(fib(in.N)), nil
		})
	guest.AddTool(s, guest.Tool{Name: "spin", Description: "A loop of n iterations."},
		func(c *guest.Context, in nIn) (string, error) {
			x := uint64(1)
			for i := 0; i < in.N; i++ {
				x = x*6364136223846793005 + 1442695040888963407
			}
			return fmt.Sprint(x), nil
		})
	s.Run()
}
