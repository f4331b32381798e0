package reactor

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// srv is the module's server, set once at init time.
var srv *guest.Server

// Serve makes s the server that answers this module's requests. Call it
// once, from an init function or a package-level variable's initialiser,
// after registering s's tools, resources and prompts: that is the start-up
// the snapshot records.
func Serve(s *guest.Server) {
	if srv != nil {
		panic("reactor: Serve called twice")
	}
	srv = s
}

// warmUp is the describe request the snapshot phase answers, to leave
// encoding/json's caches for the SDK's own types filled in the snapshot.
const warmUp = `{"jsonrpc":"2.0","id":0,"method":"wasmcp/describe","params":{"abiVersions":[1]}}` + "\n"

// main serves the instance's one request (ABI: wasmcp_main).
//
//go:wasmexport wasmcp_main
func main() {
	if srv == nil {
		fmt.Fprintln(os.Stderr, "reactor: no server: call reactor.Serve from an init function")
		os.Exit(1)
	}
	srv.Run()
}

// snapshot is the host's last call before it records the instance: it
// answers one describe request and prepares the server (so the JSON
// encoders and decoders the SDK and the tools use on every call are built
// once, in the snapshot) and collects the garbage of start-up, so the
// image holds only what is live.
//
//go:wasmexport wasmcp_snapshot
func snapshot() {
	if srv == nil {
		runtime.GC()
		return
	}
	_ = srv.Serve(bytes.NewReader([]byte(warmUp)), io.Discard)
	srv.Prepare()
	runtime.GC()
	// Once more after the collection, which emptied the allocator's
	// per-size caches: the snapshot then starts every call with them
	// holding free space, as a long-running process would.
	_ = srv.Serve(bytes.NewReader([]byte(warmUp)), io.Discard)
	srv.Prepare()
}
