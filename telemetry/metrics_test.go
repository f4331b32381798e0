package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsHooks(t *testing.T) {
	srv, _, m := newTraced(t, nil)
	m.TaskChanged("working")
	m.TaskChanged("working")
	m.TaskChanged("completed")
	m.ModuleRefused()
	m.CatalogPublished()
	m.ModuleLoaded("fake", 30*time.Millisecond, 1234)
	if got := testutil.ToFloat64(m.tasks.WithLabelValues("working")); got != 2 {
		t.Errorf("working transitions %v", got)
	}
	if testutil.ToFloat64(m.refusals) != 1 || testutil.ToFloat64(m.reloads) != 1 || testutil.ToFloat64(m.wasmBytes.WithLabelValues("fake")) != 1234 {
		t.Error("refusals, publications or module bytes did not move")
	}
	call(t, srv, context.Background(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{`+modernMeta+`}}}`)
	call(t, srv, context.Background(), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"broken","arguments":{},"_meta":{`+modernMeta+`}}}`)
	want := `
# HELP wasmcp_tool_calls_total tools/call of loaded tools by outcome: ok, tool_error, error, trap, limit (limit names which), cancelled, refused, input.
# TYPE wasmcp_tool_calls_total counter
wasmcp_tool_calls_total{limit="",module="fake",outcome="ok",tool="echo"} 1
wasmcp_tool_calls_total{limit="",module="fake",outcome="tool_error",tool="broken"} 1
# HELP wasmcp_instance_memory_high_water_bytes Largest linear memory an instance of the tool ended with.
# TYPE wasmcp_instance_memory_high_water_bytes gauge
wasmcp_instance_memory_high_water_bytes{module="fake",tool="broken"} 65536
wasmcp_instance_memory_high_water_bytes{module="fake",tool="echo"} 65536
# HELP wasmcp_modules Modules in the catalog.
# TYPE wasmcp_modules gauge
wasmcp_modules 1
# HELP wasmcp_tools Tools in the catalog.
# TYPE wasmcp_tools gauge
wasmcp_tools 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "wasmcp_tool_calls_total",
		"wasmcp_instance_memory_high_water_bytes", "wasmcp_modules", "wasmcp_tools"); err != nil {
		t.Fatal(err)
	}
}
