package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/wasmcp/wasmcp/cmd/wasmcp/internal/status"

	"github.com/wasmcp/wasmcp/server"
)

// cmdStatus asks a running server for its state over its metrics endpoint.
func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "http://"+server.DefaultMetricsAddr, "base URL of the server's metrics: its --http address on a loopback bind without --auth, else its --metrics-addr (default "+server.DefaultMetricsAddr+")")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the server")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: wasmcp status [--server URL]

Asks a running wasmcp serve, over its /metrics and /readyz, for its modules,
tools, calls, errors and queue depths.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	return status.Print(ctx, stdout, *server)
}
