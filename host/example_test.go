package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/wasmcp/wasmcp/host"
)

// printPeer is where a guest's notifications and requests to the client
// go; an embedder forwards them to its client.
type printPeer struct{}

func (printPeer) Notify(_ context.Context, method string, params []byte) {
	fmt.Println("notification:", method, string(params))
}

func (printPeer) Request(context.Context, string, []byte) ([]byte, error) {
	return nil, errors.New("this embedder has no client to ask")
}

// An embedder compiles a module once with Load, reads what it offers from
// its description, and runs each call in a fresh instance with Call.
func Example() {
	ctx := context.Background()
	eng, err := host.NewEngine(host.Config{CacheDir: "-"}) // "-": no on-disk cache
	if err != nil {
		panic(err)
	}
	defer eng.Close(ctx)

	wasm, err := os.ReadFile("../tests/testdata/small/small.wasm") // a hand-written guest
	if err != nil {
		panic(err)
	}
	mod, err := eng.Load(ctx, "small", wasm, host.Policy{})
	if err != nil {
		panic(err) // the error names the module and why it was refused
	}
	defer mod.Close(ctx)
	for _, t := range mod.Description().Tools {
		fmt.Println("tool:", t.Name)
	}

	reply, err := mod.Call(ctx, "tools/call", []byte(`{"name":"small_hello","arguments":{}}`), printPeer{})
	if err != nil {
		panic(err) // a *host.GuestError: trap, limit, deadline, malformed output
	}
	fmt.Println("result:", string(reply.Result))
	// Output:
	// tool: small_hello
	// result: {"content":[{"type":"text","text":"hello from small v1"}]}
}
