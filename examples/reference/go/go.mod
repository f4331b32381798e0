module github.com/wasmcp/wasmcp/examples/reference/go

go 1.26

require github.com/wasmcp/wasmcp/guest-sdk/go v0.1.0

require github.com/wasmcp/wasmcp/abi v0.1.0 // indirect

// The reference tool set is a module of its own, as a tool is: it uses the
// SDK the way a tool author does, from the checkout instead of a tagged
// release.
replace (
	github.com/wasmcp/wasmcp/abi => ../../../abi
	github.com/wasmcp/wasmcp/guest-sdk/go => ../../../guest-sdk/go
)
