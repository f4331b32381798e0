module github.com/wasmcp/wasmcp/bench/echoreactor

go 1.26

require github.com/wasmcp/wasmcp/guest-sdk/go v0.1.0

require github.com/wasmcp/wasmcp/abi v0.1.0 // indirect

// A tool module of its own, using the SDK from the checkout.
replace (
	github.com/wasmcp/wasmcp/abi => ../../abi
	github.com/wasmcp/wasmcp/guest-sdk/go => ../../guest-sdk/go
)
