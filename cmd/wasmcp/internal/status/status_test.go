package status

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const metrics = `# TYPE wasmcp_modules gauge
wasmcp_modules 2
# TYPE wasmcp_tools gauge
wasmcp_tools 3
# TYPE wasmcp_loads_waiting gauge
wasmcp_loads_waiting 2
# TYPE wasmcp_tool_calls_total counter
wasmcp_tool_calls_total{module="m",tool="echo",outcome="ok",limit=""} 5
wasmcp_tool_calls_total{module="m",tool="echo",outcome="limit",limit="timeout"} 2
# TYPE wasmcp_gate_queue_depth gauge
wasmcp_gate_queue_depth{module="m"} 4
# TYPE wasmcp_module_refused gauge
wasmcp_module_refused{module="b.wasm",reason="declares tool \"small_hello\", which a.wasm serves` + "\x1b[8m" + `"} 1
`

// TestPrint: the header counts and one row per tool, with its errors by
// outcome and its module's queue; a server that is not wasmcp's is named.
func TestPrint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			w.Write([]byte(metrics))
		case "/readyz":
			w.Write([]byte("ready\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var out strings.Builder
	if err := Print(context.Background(), &out, srv.URL+"/metrics"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server   " + srv.URL + " (ready)", "modules  2  tools 3", "limit:timeout=2", "waiting  2 loads for room in --code-memory", `refused  b.wasm: declares tool "small_hello", which a.wasm serves\x1b[8m`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	if !strings.Contains(out.String(), "m       echo  7      2") {
		t.Errorf("row of m/echo:\n%s", out.String())
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("up 1\n")) }))
	defer other.Close()
	if err := Print(context.Background(), &out, other.URL); err == nil || !strings.Contains(err.Error(), "not a wasmcp server") {
		t.Errorf("another server's metrics: %v", err)
	}
}
