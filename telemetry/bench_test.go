package telemetry

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/wasmcp/wasmcp/protocol"
)

// BenchmarkCallOverhead is the cost metrics and tracing add to one modern
// tools/call served by protocol.Server, with a guest that answers at once
// (so only the server's own work is measured, not a WebAssembly instance):
//
//	go test ./telemetry -run '^$' -bench CallOverhead -benchmem -count 6
func BenchmarkCallOverhead(b *testing.B) {
	mem := tracetest.NewInMemoryExporter()
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem))
	defer sdk.Shutdown(context.Background())
	for _, c := range []struct {
		name    string
		metrics bool
		tracer  protocol.Tracer
	}{
		{"off", false, nil},
		{"metrics", true, nil},
		{"tracing=noop", false, NewTracing(noop.NewTracerProvider())},
		{"tracing=memory", false, NewTracing(sdk)},
		{"metrics+tracing=memory", true, NewTracing(sdk)},
	} {
		b.Run(c.name, func(b *testing.B) {
			opts := protocol.Options{Tracer: c.tracer}
			if c.metrics {
				opts.Observer = NewMetrics()
			}
			srv := protocol.NewServer(opts)
			cat, _ := protocol.NewCatalog([]protocol.Module{&fakeModule{}}, nil)
			srv.SetCatalog(cat)
			msg, _, perr := protocol.Decode([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{` + modernMeta + `}}}`))
			if perr != nil {
				b.Fatal(perr)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if resp := srv.Handle(ctx, nil, msg, nil, protocol.Hint{}); resp.Code != 0 {
					b.Fatal(string(resp.Body))
				}
				if i%1024 == 0 {
					mem.Reset()
				}
			}
		})
	}
}
