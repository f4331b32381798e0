module github.com/wasmcp/wasmcp/guest-sdk/go

go 1.26

require github.com/wasmcp/wasmcp/abi v0.1.0

// For work inside the repository only: a module that requires this one
// ignores the replace and gets abi at the version above.
replace github.com/wasmcp/wasmcp/abi => ../../abi
