package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wasmcp/wasmcp/internal/egress"
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

func TestAuthAndOutboundMetrics(t *testing.T) {
	m := NewMetrics()
	m.AuthRefused("jwt", "invalid")
	m.AuthRefused("jwt", "invalid")
	m.AuthRefused("apikey", "missing")
	m.RequestDone(context.Background(), &egress.Done{Module: "web", Outcome: "ok", Status: 201, BytesOut: 7, BytesIn: 100, Duration: 20 * time.Millisecond})
	m.RequestDone(context.Background(), &egress.Done{Module: "web", Outcome: "ok", Status: 503, BytesIn: 5, Duration: 3 * time.Second})
	m.RequestDone(context.Background(), &egress.Done{Module: "web", Outcome: "policy_refused"})
	want := `
# HELP wasmcp_auth_refusals_total HTTP requests refused by authentication, by provider and reason: missing, malformed, invalid, forbidden, upstream, limited.
# TYPE wasmcp_auth_refusals_total counter
wasmcp_auth_refusals_total{provider="apikey",reason="missing"} 1
wasmcp_auth_refusals_total{provider="jwt",reason="invalid"} 2
# HELP wasmcp_outbound_bytes_total Body bytes of guests' outbound HTTP requests, by module and direction (out: sent, in: received).
# TYPE wasmcp_outbound_bytes_total counter
wasmcp_outbound_bytes_total{direction="in",module="web"} 105
wasmcp_outbound_bytes_total{direction="out",module="web"} 7
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "wasmcp_auth_refusals_total", "wasmcp_outbound_bytes_total"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		outcome, status string
		want            float64
	}{{"ok", "2xx", 1}, {"ok", "5xx", 1}, {"policy_refused", "none", 1}, {"ok", "none", 0}} {
		if got := testutil.ToFloat64(m.outCalls.WithLabelValues("web", c.outcome, c.status)); got != c.want {
			t.Errorf("outbound %s/%s = %v, want %v", c.outcome, c.status, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.outDuration); n != 1 {
		t.Errorf("%d duration series", n)
	}
	for code, want := range map[int]string{0: "none", 99: "none", 100: "1xx", 204: "2xx", 308: "3xx", 451: "4xx", 599: "5xx", 600: "none"} {
		if got := statusClass(code); got != want {
			t.Errorf("statusClass(%d) = %s", code, got)
		}
	}
}

func TestLoadsWaitingMetric(t *testing.T) {
	m := NewMetrics()
	n := 0
	m.WatchLoadsWaiting(func() int { return n })
	n = 3
	want := `
# HELP wasmcp_loads_waiting Module loads (compilations, snapshot start-ups) waiting for room in --code-memory.
# TYPE wasmcp_loads_waiting gauge
wasmcp_loads_waiting 3
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "wasmcp_loads_waiting"); err != nil {
		t.Fatal(err)
	}
}

func TestCompileAndCodeMemoryMetrics(t *testing.T) {
	m := NewMetrics()
	m.ModuleCompiled("wc", 1500*time.Millisecond, 14<<20)
	m.ModuleCompiled("wc", 300*time.Millisecond, 15<<20) // compiled again after an eviction
	m.WatchCodeMemory(func() (int64, int64) { return 15 << 20, 512 << 20 })
	want := `
# HELP wasmcp_code_memory_budget_bytes The --code-memory budget (0: none).
# TYPE wasmcp_code_memory_budget_bytes gauge
wasmcp_code_memory_budget_bytes 5.36870912e+08
# HELP wasmcp_code_memory_bytes Compiled code the engine holds for all modules (--code-memory counts it).
# TYPE wasmcp_code_memory_bytes gauge
wasmcp_code_memory_bytes 1.572864e+07
# HELP wasmcp_module_code_bytes Compiled code of each module as the host measures it (what --code-memory counts), from its last compilation.
# TYPE wasmcp_module_code_bytes gauge
wasmcp_module_code_bytes{module="wc"} 1.572864e+07
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "wasmcp_code_memory_budget_bytes", "wasmcp_code_memory_bytes", "wasmcp_module_code_bytes"); err != nil {
		t.Fatal(err)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var compiles uint64
	for _, f := range fams {
		if f.GetName() == "wasmcp_module_compile_duration_seconds" {
			for _, mm := range f.GetMetric() {
				compiles += mm.GetHistogram().GetSampleCount()
			}
		}
	}
	if compiles != 2 {
		t.Fatalf("compilations observed: %d, want 2", compiles)
	}
}
