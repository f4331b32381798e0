//go:build otlpgrpc

package telemetry

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/wasmcp/wasmcp/protocol"
)

// collectorStub is an OTLP/gRPC trace collector that keeps the names of
// the spans it receives.
type collectorStub struct {
	collector.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *collectorStub) Export(_ context.Context, req *collector.ExportTraceServiceRequest) (*collector.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				c.names = append(c.names, sp.GetName())
			}
		}
	}
	return &collector.ExportTraceServiceResponse{}, nil
}

func TestOTLPOverGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stub := &collectorStub{}
	gs := grpc.NewServer()
	collector.RegisterTraceServiceServer(gs, stub)
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()

	ctx := context.Background()
	tr, shutdown, err := StartOTLP(ctx, TracingConfig{Endpoint: "http://" + ln.Addr().String(), Protocol: ProtocolGRPC})
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.NewServer(protocol.Options{Tracer: tr})
	cat, _ := protocol.NewCatalog([]protocol.Module{&fakeModule{log: slog.Default()}}, nil)
	srv.SetCatalog(cat)
	call(t, srv, ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{`+modernMeta+`}}}`)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := shutdown(sctx); err != nil {
		t.Fatalf("flushing to the collector: %v", err)
	}
	stub.mu.Lock()
	got := strings.Join(stub.names, ",")
	stub.mu.Unlock()
	for _, want := range []string{"tools/call echo", "execute_tool echo", "instantiate fake", "run fake"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the collector got spans %q, without %q", got, want)
		}
	}
}
