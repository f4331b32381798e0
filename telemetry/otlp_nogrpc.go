//go:build !otlpgrpc

package telemetry

import (
	"context"
	"errors"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// grpcBuilt reports whether this binary has the OTLP/gRPC exporter: by
// default it does not, since gRPC and its dependencies are about an eighth
// of the binary's packages and a large part of its build time
// (docs/performance.md, "Building wasmcp"); every OTLP collector also
// takes OTLP/HTTP.
const grpcBuilt = false

func grpcExporter(context.Context, string) (sdktrace.SpanExporter, error) {
	return nil, errors.New("this wasmcp is built without OTLP/gRPC: use --otlp-protocol " + ProtocolHTTP +
		" (every OTLP collector takes it, usually on port 4318), or build wasmcp with -tags otlpgrpc")
}
