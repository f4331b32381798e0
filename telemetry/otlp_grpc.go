//go:build otlpgrpc

package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// grpcBuilt reports whether this binary has the OTLP/gRPC exporter.
const grpcBuilt = true

// grpcExporter is the OTLP/gRPC span exporter for endpoint.
func grpcExporter(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
	return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(endpoint))
}
