module github.com/wasmcp/wasmcp/guest-sdk/js/tsstrip

go 1.26

// The transform builds from the checkout's SDK, as the runner does.
replace (
	github.com/wasmcp/wasmcp/abi => ../../../abi
	github.com/wasmcp/wasmcp/guest-sdk/go => ../../go
)

require (
	github.com/evanw/esbuild v0.28.2
	github.com/wasmcp/wasmcp/guest-sdk/go v0.1.0
)

require (
	github.com/wasmcp/wasmcp/abi v0.1.0 // indirect
	golang.org/x/sys v0.0.0-20220715151400-c0bba94af5f8 // indirect
)
