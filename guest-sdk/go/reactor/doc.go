// Package reactor builds a Go tool module as a reactor the wasmcp host
// runs from a snapshot: the Go runtime and the program's package
// initialisers run once, when the host loads the module, and every call's
// fresh instance starts from the state they left (wasmcp ABI, section
// 1.1). A call then costs a small fraction of a command module's, which
// starts the Go runtime in every instance.
//
// Register everything at init time and hand the server to Serve; main is
// not run in a reactor:
//
//	package main
//
//	import (
//		guest "github.com/wasmcp/wasmcp/guest-sdk/go"
//		"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
//	)
//
//	func init() {
//		s := guest.New("hello", "1.0.0")
//		guest.AddTool(s, guest.Tool{Name: "greet", Description: "Greets someone."},
//			func(c *guest.Context, in GreetIn) (string, error) { return "Hello, " + in.Name + "!", nil })
//		reactor.Serve(s)
//	}
//
//	func main() {}
//
// and build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o hello.wasm .
//
// Importing this package adds the exports wasmcp_main (serve one request)
// and wasmcp_snapshot (the host's request for a snapshot, see below) to
// the module. A program that imports it must be built with
// -buildmode=c-shared; without it Go makes a command whose runtime is not
// started when the host calls wasmcp_main.
//
// # What a snapshot freezes
//
// Every call starts from the same memory, so whatever the program and the
// Go runtime computed at start-up is the same in every call — and every
// call is still a fresh instance: nothing one call writes is seen by the
// next.
//
//   - crypto/rand asks the host on every read: its bytes differ on every
//     call. Use it for anything that must not repeat.
//   - math/rand and math/rand/v2's top-level functions draw from the
//     runtime's generator, which was seeded at start-up: they return the
//     same sequence in every call. So does map iteration order: the
//     runtime's seeds for map hashing and for the iteration's starting
//     point are part of the snapshot, so ranging over the same map built
//     the same way visits its keys in the same order in every call (that
//     order is still unspecified and may change between builds or
//     snapshots). For per-call randomness seed a generator from
//     crypto/rand, e.g. rand.New(rand.NewChaCha8(seed)) with a seed read
//     from crypto/rand.Read.
//   - The environment (os.Getenv) is what the module's policy gives it,
//     read at start-up; a policy change reloads the module and takes a new
//     snapshot. Time zones: the module has no zoneinfo files, time.Local
//     is UTC (as in a command module).
//   - Package-level variables hold their start-up values in every call.
//     Anything computed at init — a parsed template, a compiled regular
//     expression, a lookup table — is computed once, at load.
//   - Files opened at start-up (from a mounted directory) are not open in
//     a call: open files in handlers.
//   - The clocks are real in every call (time.Now, time.Since).
//
// The host's policy key snapshot = false runs such a module without a
// snapshot (every instance runs the start-up, as a plain reactor).
package reactor
