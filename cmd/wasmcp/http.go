package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/wasmcp/wasmcp/protocol"
)

// serveHTTP serves MCP over HTTP on addr until ctx is done.
func serveHTTP(ctx context.Context, srv *protocol.Server, addr string, log *slog.Logger) error {
	return errors.New("--http: the HTTP transport is not built yet; use --stdio")
}
