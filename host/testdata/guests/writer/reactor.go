//go:build reactor

package main

import (
	"os"
	"strconv"

	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

func init() {
	if n, _ := strconv.Atoi(os.Getenv("WRITER_STARTUP")); n > 0 {
		f, err := os.Create("/data/startup")
		if err == nil {
			buf := make([]byte, 1<<20)
			for done := 0; done < n; {
				k, err := f.Write(buf[:min(len(buf), n-done)])
				done += k
				if err != nil {
					break
				}
			}
			f.Close()
		}
	}
	reactor.Serve(newServer())
}

func main() {}
