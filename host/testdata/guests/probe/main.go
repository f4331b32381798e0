// Command probe is a guest for the host's tests: each tool exercises one
// behaviour of the host — statelessness, limits, and ways to misbehave.
// Built as it is, it is a command module (command.go); with the build tag
// reactor and -buildmode=c-shared it is a reactor that asks for a snapshot
// (reactor.go), with the same tools.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand"
	mrand2 "math/rand/v2"
	"os"
	"strings"
	"time"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// calls counts calls in a global: a fresh instance per call must see 1.
var calls int

type none struct{}

type sizeIn struct {
	N int `json:"n"`
}

// initEnv is PROBE_ENV as the program saw it at start-up.
var initEnv = os.Getenv("PROBE_ENV")

// scratch is zero in every snapshot (bss): scribble fills it, scratchsum
// reports what is in it.
var scratch [1 << 16]byte

// initMap is built at start-up; mapOrder ranges over it.
var initMap = map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8}

func newServer() *guest.Server {
	s := guest.New("probe", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "count", Description: "Counts calls in a global."},
		func(c *guest.Context, _ none) (string, error) {
			calls++
			return fmt.Sprint(calls), nil
		})
	guest.AddTool(s, guest.Tool{Name: "sleep", Description: "Sleeps n milliseconds."},
		func(c *guest.Context, in sizeIn) (string, error) {
			time.Sleep(time.Duration(in.N) * time.Millisecond)
			return "slept", nil
		})
	guest.AddTool(s, guest.Tool{Name: "loop", Description: "Spins forever."},
		func(c *guest.Context, _ none) (string, error) {
			for i := 0; ; i++ {
				calls += i
			}
		})
	guest.AddTool(s, guest.Tool{Name: "exit3", Description: "Exits with code 3."},
		func(c *guest.Context, _ none) (string, error) {
			fmt.Fprintln(os.Stderr, "about to exit 3")
			os.Exit(3)
			return "", nil
		})
	guest.AddTool(s, guest.Tool{Name: "garbage", Description: "Writes a malformed line."},
		func(c *guest.Context, _ none) (string, error) {
			fmt.Println("this is not json")
			return "unreachable", nil
		})
	guest.AddTool(s, guest.Tool{Name: "wrong_id", Description: "Answers with the wrong id."},
		func(c *guest.Context, _ none) (string, error) {
			fmt.Println(`{"jsonrpc":"2.0","id":987654321,"result":{"content":[]}}`)
			return "too late", nil
		})
	guest.AddTool(s, guest.Tool{Name: "flood", Description: "Writes n MiB to stderr."},
		func(c *guest.Context, in sizeIn) (string, error) {
			line := strings.Repeat("x", 1023) + "\n"
			for i := 0; i < in.N*1024; i++ {
				os.Stderr.WriteString(line)
			}
			return "flooded", nil
		})
	guest.AddTool(s, guest.Tool{Name: "alloc", Description: "Allocates n MiB and keeps it."},
		func(c *guest.Context, in sizeIn) (string, error) {
			var keep [][]byte
			for i := 0; i < in.N; i++ {
				b := make([]byte, 1<<20)
				b[0] = 1
				keep = append(keep, b)
			}
			return fmt.Sprint(len(keep)), nil
		})
	guest.AddTool(s, guest.Tool{Name: "ask", Description: "Elicits a name and greets it."},
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
	guest.AddTool(s, guest.Tool{Name: "env", Description: "Reports what the guest can see."},
		func(c *guest.Context, _ none) (string, error) {
			_, err := os.ReadFile("/etc/passwd")
			return fmt.Sprintf("args=%q env=%d passwd=%v", os.Args, len(os.Environ()), err != nil), nil
		})
	guest.AddTool(s, guest.Tool{Name: "random", Description: "Reports random values and a map's order."},
		func(c *guest.Context, _ none) (string, error) {
			b := make([]byte, 16)
			if _, err := rand.Read(b); err != nil {
				return "", err
			}
			fresh := map[string]int{}
			for k, v := range initMap {
				fresh[k] = v
			}
			var initOrder, freshOrder string
			for k := range initMap {
				initOrder += k
			}
			for k := range fresh {
				freshOrder += k
			}
			zone, _ := time.Now().Zone()
			return fmt.Sprintf("crypto=%s math=%d v2=%d initmap=%s map=%s env=%s zone=%s", hex.EncodeToString(b),
				mrand.Int63(), mrand2.Uint64(), initOrder, freshOrder, initEnv, zone), nil
		})
	guest.AddTool(s, guest.Tool{Name: "mutate", Description: "Changes what start-up built, and the call counter."},
		func(c *guest.Context, _ none) (string, error) {
			initMap["a"] = 100
			delete(initMap, "b")
			initEnv = "mutated"
			calls = 7
			junk := make([]byte, 8<<20) // grows the heap (and the memory) past the image
			for i := range junk {
				junk[i] = 0xA5
			}
			return fmt.Sprint(len(junk)), nil
		})
	guest.AddTool(s, guest.Tool{Name: "scribble", Description: "Fills a zero global array and a fresh heap slice."},
		func(c *guest.Context, _ none) (string, error) {
			for i := range scratch {
				scratch[i] = 0xA5
			}
			junk := make([]byte, 1<<20) // within the memory the image left free
			for i := range junk {
				junk[i] = 0x5A
			}
			return fmt.Sprint(scratchSum() + len(junk)), nil
		})
	guest.AddTool(s, guest.Tool{Name: "scratchsum", Description: "Sums the zero global array and a fresh heap slice."},
		func(c *guest.Context, _ none) (string, error) {
			fresh := make([]byte, 1<<20) // the runtime takes memory it never used for zero
			n := 0
			for _, b := range fresh {
				n += int(b)
			}
			return fmt.Sprint(scratchSum() + n), nil
		})
	guest.AddTool(s, guest.Tool{Name: "startup", Description: "Reports what start-up built, and the call counter."},
		func(c *guest.Context, _ none) (string, error) {
			return fmt.Sprintf("a=%d b=%d len=%d env=%s calls=%d", initMap["a"], initMap["b"], len(initMap), initEnv, calls), nil
		})
	return s
}

func scratchSum() int {
	n := 0
	for _, b := range scratch {
		n += int(b)
	}
	return n
}
