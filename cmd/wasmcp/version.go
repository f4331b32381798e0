package main

import "github.com/wasmcp/wasmcp/cmd/wasmcp/internal/buildinfo"

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// buildVersion is the version wasmcp reports (buildinfo.Version).
func buildVersion() string { return buildinfo.Version(version) }
