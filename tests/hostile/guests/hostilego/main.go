// Command hostilego is a Go guest for the hostile battery: each tool tries
// to take more than it was granted — memory, time, files, environment.
package main

import (
	"encoding/json"
	"os"
	"sort"
	"strconv"
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
	guest.AddTool(s, guest.Tool{Name: "net_escape", Description: "Tries to reach what its [http] grant does not allow; reports each attempt."},
		func(c *guest.Context, in netIn) (string, error) {
			out := map[string]string{}
			try := func(name, method, url string, hdr map[string][]string) {
				r, err := c.HTTP(&guest.HTTPRequest{Method: method, URL: url, Headers: hdr})
				if he, ok := err.(*guest.HTTPError); ok {
					out[name] = "err:" + he.Reason
					return
				}
				if err != nil {
					out[name] = "err:" + err.Error()
					return
				}
				out[name] = "ok:" + strconv.Itoa(r.Status) + " " + r.Body
			}
			b := in.Base // http://127.0.0.1:PORT, the one destination granted
			port := strings.TrimPrefix(b, "http://127.0.0.1:")
			try("granted", "", b+"/", nil)
			try("secret echo", "", b+"/echo", nil)
			// Every destination here is on loopback: were the guard wrong, no
			// packet would leave the machine. The refusals of private and
			// metadata addresses are tested with an injected resolver and
			// dialer (internal/egress).
			try("userinfo", "", "http://127.0.0.1:"+port+"@127.0.0.1:1/", nil)
			try("userinfo at allowed", "", "http://x@127.0.0.1:"+port+"/", nil)
			try("decimal ip", "", "http://2130706433:"+port+"/", nil)
			try("octal ip", "", "http://0177.0.0.1:"+port+"/", nil)
			try("hex ip", "", "http://0x7f000001:"+port+"/", nil)
			try("short ip", "", "http://127.1:"+port+"/", nil)
			try("ipv6 loopback", "", "http://[::1]:"+port+"/", nil)
			try("ipv4-mapped ipv6", "", "http://[::ffff:127.0.0.1]:"+port+"/", nil)
			try("redirect out of the list", "", b+"/out", nil)
			try("other port", "", "http://127.0.0.1:1/", nil)
			try("method not granted", "DELETE", b+"/", nil)
			try("crlf in header", "", b+"/", map[string][]string{"X-A": {"a\r\nX-Token: forged"}})
			try("host header", "", b+"/", map[string][]string{"Host": {"127.0.0.1:1"}})
			try("file scheme", "", "file:///etc/passwd", nil)
			try("uppercase and trailing dot", "", "HTTP://127.0.0.1:"+port+"/", nil)
			var flood []string
			for i := 0; i < 40; i++ {
				r, err := c.HTTP(&guest.HTTPRequest{URL: b + "/"})
				switch he, _ := err.(*guest.HTTPError); {
				case he != nil:
					flood = append(flood, he.Reason)
				case err != nil:
					flood = append(flood, err.Error())
				default:
					flood = append(flood, strconv.Itoa(r.Status))
				}
			}
			out["flood"] = strings.Join(flood, ",")
			b2, _ := json.Marshal(out)
			return string(b2), nil
		})
	s.Run()
}

type netIn struct {
	Base string `json:"base"`
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
