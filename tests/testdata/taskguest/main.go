// Command taskguest is a guest for the end-to-end task tests: tools that
// may run as tasks and, once they have allocated the memory they were asked
// for, never end: spin loops without a single host call — the hardest guest
// to stop — and hold sleeps.
package main

import (
	"time"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

type spinIn struct {
	MiB int `json:"mib" jsonschema:"description=memory to allocate and touch before spinning, in MiB"`
}

var sink int

// allocate allocates and touches n MiB.
func allocate(n int) [][]byte {
	keep := make([][]byte, max(n, 1))
	for i := range keep {
		keep[i] = make([]byte, 1<<20)
		for j := 0; j < len(keep[i]); j += 4096 {
			keep[i][j] = byte(j)
		}
	}
	return keep
}

func main() {
	s := guest.New("taskguest", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "spin", TaskSupport: "optional",
		Description: "Allocates memory, reports progress once, then spins forever."},
		func(c *guest.Context, in spinIn) (string, error) {
			keep := allocate(in.MiB)
			c.Progress(1, 2, "allocated")
			for i := 0; ; i++ {
				sink += i + len(keep[i%len(keep)])
			}
		})
	guest.AddTool(s, guest.Tool{Name: "hold", TaskSupport: "optional",
		Description: "Allocates memory, reports progress once, then sleeps forever."},
		func(c *guest.Context, in spinIn) (string, error) {
			keep := allocate(in.MiB)
			c.Progress(1, 2, "allocated")
			for i := 0; ; i++ {
				time.Sleep(time.Second)
				sink += len(keep[i%len(keep)])
			}
		})
	s.Run()
}
