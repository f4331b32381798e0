// Command hostilego is a Go guest for the hostile battery: each tool tries
// to take more than it was granted — memory, time, files, environment.
package main

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"time"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

type none struct{}

// keep holds allocations so the collector cannot free them.
var keep [][]byte

func main() {
	s := guest.New("hostilego", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "alloc_oom", Description: "Allocates 1 MiB blocks and keeps them until the runtime runs out of memory."},
		func(c *guest.Context, _ none) (string, error) {
			for {
				b := make([]byte, 1<<20)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1
				}
				keep = append(keep, b)
			}
		})
	guest.AddTool(s, guest.Tool{Name: "sleep_forever", Description: "Sleeps for an hour: never answers, never exits."},
		func(c *guest.Context, _ none) (string, error) {
			time.Sleep(time.Hour)
			return "woke up", nil
		})
	guest.AddTool(s, guest.Tool{Name: "escape", Description: "Tries to read and write outside its mounts; reports each attempt."},
		func(c *guest.Context, _ none) (string, error) {
			out := map[string]string{}
			read := func(p string) {
				b, err := os.ReadFile(p)
				out["read "+p] = result(string(b), err)
			}
			write := func(p string) {
				out["write "+p] = result("", os.WriteFile(p, []byte("x"), 0o644))
			}
			read("/etc/passwd")
			read("../etc/passwd")
			read("../../../../../etc/passwd")
			read("/data/../../etc/passwd")
			read("/data/hello.txt")
			read("/data/abs_link/secret")
			read("/data/rel_link/secret")
			read("/proc/self/environ")
			write("/data/new.txt")
			write("/etc/wasmcp-hostile")
			write("/scratch/ok.txt")
			out["symlink /scratch/esc"] = result("", os.Symlink("../../../../../../../../../etc", "/scratch/esc"))
			read("/scratch/esc/passwd")
			out["symlink /scratch/esc_abs"] = result("", os.Symlink("/etc", "/scratch/esc_abs"))
			read("/scratch/esc_abs/passwd")
			out["rename /scratch/ok.txt ../../escaped"] = result("", os.Rename("/scratch/ok.txt", "/scratch/../../escaped"))
			ents, err := os.ReadDir("/")
			names := make([]string, 0, len(ents))
			for _, e := range ents {
				names = append(names, e.Name())
			}
			out["readdir /"] = result(strings.Join(names, ","), err)
			b, _ := json.Marshal(out)
			return string(b), nil
		})
	guest.AddTool(s, guest.Tool{Name: "env", Description: "Reports the environment it sees."},
		func(c *guest.Context, _ none) (string, error) {
			env := os.Environ()
			sort.Strings(env)
			b, _ := json.Marshal(map[string]any{"environ": env, "args": os.Args})
			return string(b), nil
		})
	s.Run()
}

// result renders an attempt: "ok:" and what was read, or "err:" and why.
func result(content string, err error) string {
	if err != nil {
		return "err:" + err.Error()
	}
	if len(content) > 40 {
		content = content[:40]
	}
	return "ok:" + content
}
