package telemetry

import (
	"context"
	"strings"
	"testing"
)

func TestOTLPConfigRefused(t *testing.T) {
	for _, c := range []TracingConfig{
		{Endpoint: "http://127.0.0.1:4317", Protocol: "thrift"},
		{Endpoint: "127.0.0.1:4317", Protocol: ProtocolGRPC},
		{Endpoint: "unix:///tmp/x", Protocol: ProtocolGRPC},
	} {
		if _, _, err := StartOTLP(context.Background(), c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestOTLPGRPCNeedsTheBuildTag: a binary built without -tags otlpgrpc
// refuses --otlp-protocol grpc with a message that says how to get it.
func TestOTLPGRPCNeedsTheBuildTag(t *testing.T) {
	if grpcBuilt {
		t.Skip("built with -tags otlpgrpc (TestOTLPOverGRPC covers it)")
	}
	_, _, err := StartOTLP(context.Background(), TracingConfig{Endpoint: "http://127.0.0.1:4317", Protocol: ProtocolGRPC})
	if err == nil || !strings.Contains(err.Error(), "-tags otlpgrpc") || !strings.Contains(err.Error(), ProtocolHTTP) {
		t.Fatalf("err = %v", err)
	}
}
