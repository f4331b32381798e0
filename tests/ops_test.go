package tests

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// End-to-end tests of what an operator sees: /metrics, /healthz, /readyz on
// the HTTP listener of wasmcp serve.

// opsTools is a tools directory with the small module and the hostile one.
func opsTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, src := range []string{"testdata/small/small.wasm", "hostile/guests/hostile.wasm"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scrape reads and parses base/metrics.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value is the value of the counter, gauge or histogram count of family
// name whose labels include want; 0 when absent.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	var sum float64
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

func callModern(t *testing.T, url, tool, args string) exchange {
	t.Helper()
	return httpDo(t, http.MethodPost, url, modernHeaders("tools/call", tool),
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`,"_meta":`+modernMeta("")+`}}`)
}

func TestMetricsOutcomes(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--tools", opsTools(t), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false",
		"--timeout", "2s", "--max-output", "1")
	base := strings.TrimSuffix(s.URL, "/mcp")
	before := scrape(t, base)
	for _, name := range []string{"go_goroutines", "process_open_fds", "wasmcp_modules", "wasmcp_catalog_publications_total", "wasmcp_module_load_duration_seconds"} {
		if before[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if got := value(before, "wasmcp_modules", nil); got != 2 {
		t.Errorf("wasmcp_modules = %v, want 2", got)
	}

	// ok ×2, trap, limit (output), limit (timeout), refused (arguments), cancelled.
	for range 2 {
		if x := callModern(t, s.URL, "small_hello", `{}`); !strings.Contains(x.body, "hello from small") {
			t.Fatalf("small_hello: %d %s", x.status, x.body)
		}
	}
	for _, c := range []struct{ tool, want string }{{"unreachable", "trapped"}, {"stdout_flood", "limit output"}, {"loop", "limit timeout"}} {
		if x := callModern(t, s.URL, c.tool, `{}`); !strings.Contains(x.body, c.want) {
			t.Fatalf("%s: %d %s", c.tool, x.status, x.body)
		}
	}
	if x := callModern(t, s.URL, "small_hello", `[1]`); !strings.Contains(x.body, "Invalid arguments") {
		t.Fatalf("bad arguments: %d %s", x.status, x.body)
	}
	// A client that goes away cancels its modern call.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"silent","arguments":{},"_meta":`+modernMeta("")+`}}`))
	for k, v := range modernHeaders("tools/call", "silent") {
		req.Header.Set(k, v)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cancel()

	calls := func(fams map[string]*dto.MetricFamily, module, tool, outcome, limit string) float64 {
		want := map[string]string{"module": module, "tool": tool, "outcome": outcome}
		if limit != "" {
			want["limit"] = limit
		}
		return value(fams, "wasmcp_tool_calls_total", want)
	}
	var after map[string]*dto.MetricFamily
	waitFor(t, 5*time.Second, "the cancelled call to be counted", func() bool {
		after = scrape(t, base)
		return calls(after, "hostile", "silent", "cancelled", "") == 1
	})
	for _, c := range []struct {
		module, tool, outcome, limit string
		n                            float64
	}{
		{"small", "small_hello", "ok", "", 2},
		{"small", "small_hello", "refused", "", 1},
		{"hostile", "unreachable", "trap", "", 1},
		{"hostile", "stdout_flood", "limit", "output", 1},
		{"hostile", "loop", "limit", "timeout", 1},
		{"hostile", "silent", "cancelled", "", 1},
	} {
		if d := calls(after, c.module, c.tool, c.outcome, c.limit) - calls(before, c.module, c.tool, c.outcome, c.limit); d != c.n {
			t.Errorf("calls %s/%s %s %s moved by %v, want %v", c.module, c.tool, c.outcome, c.limit, d, c.n)
		}
	}
	// Histograms: one observation per guest call that ran (not the refused one).
	if n := value(after, "wasmcp_tool_call_duration_seconds", map[string]string{"tool": "small_hello"}); n != 2 {
		t.Errorf("duration observations for small_hello = %v, want 2", n)
	}
	if n := value(after, "wasmcp_instantiate_duration_seconds", map[string]string{"module": "hostile"}); n != 4 {
		t.Errorf("instantiation observations for hostile = %v, want 4", n)
	}
	// The loop ran for its whole 2 s deadline.
	for _, m := range after["wasmcp_tool_call_duration_seconds"].Metric {
		if labels(m)["tool"] == "loop" && m.Histogram.GetSampleSum() < 1.9 {
			t.Errorf("loop's duration sum %v, want ≥ 2 s", m.Histogram.GetSampleSum())
		}
	}
	if v := value(after, "wasmcp_guest_output_bytes_total", map[string]string{"tool": "stdout_flood"}); v < 1<<20 {
		t.Errorf("stdout_flood output bytes %v, want ≥ 1 MiB", v)
	}
	if v := value(after, "wasmcp_instance_memory_high_water_bytes", map[string]string{"tool": "small_hello"}); v != 2*65536 {
		t.Errorf("small_hello memory high-water %v, want 2 pages", v)
	}
	if v := value(after, "wasmcp_tool_result_bytes_total", map[string]string{"tool": "small_hello"}); v <= 0 {
		t.Errorf("small_hello result bytes %v", v)
	}
	// Both modules have been compiled by now (at load, or at their first
	// call when listed from a cached description).
	for _, module := range []string{"small", "hostile"} {
		if v := value(after, "wasmcp_module_code_bytes", map[string]string{"module": module}); v <= 0 {
			t.Errorf("%s compiled code bytes %v", module, v)
		}
		if n := value(after, "wasmcp_module_compile_duration_seconds", map[string]string{"module": module}); n < 1 {
			t.Errorf("%s compilations observed: %v", module, n)
		}
	}
	if used, budget := value(after, "wasmcp_code_memory_bytes", nil), value(after, "wasmcp_code_memory_budget_bytes", nil); used <= 0 || budget < used {
		t.Errorf("code memory %v of a budget of %v", used, budget)
	}

	// wasmcp status reads the same endpoint.
	out, err := exec.Command(wasmcpBin, "status", "--server", base).CombinedOutput()
	if err != nil {
		t.Fatalf("wasmcp status: %v\n%s", err, out)
	}
	for _, want := range []string{"(ready)", "modules  2  tools 17", "loop", "limit:timeout=1", "unreachable", "trap=1", "refused=1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("wasmcp status lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`small\s+small_hello\s+3\s+1\s`).Match(out) {
		t.Errorf("wasmcp status: small_hello is not 3 calls, 1 not ok:\n%s", out)
	}
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestReadinessShutdown(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--tools", opsTools(t), "--http", "127.0.0.1:0", "--cache-dir", compileCache, "--watch=false",
		"--shutdown-drain", "1s")
	base := strings.TrimSuffix(s.URL, "/mcp")
	if x := httpDo(t, http.MethodGet, base+"/readyz", nil, ""); x.status != 200 {
		t.Fatalf("/readyz once serving: %d %s", x.status, x.body)
	}
	if x := httpDo(t, http.MethodGet, base+"/healthz", nil, ""); x.status != 200 {
		t.Fatalf("/healthz: %d %s", x.status, x.body)
	}
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "/readyz to fail while draining", func() bool {
		x := httpDo(t, http.MethodGet, base+"/readyz", nil, "")
		return x.status == 503 && strings.Contains(x.body, "shutting down")
	})
	// Still serving while not ready.
	if x := httpDo(t, http.MethodGet, base+"/healthz", nil, ""); x.status != 200 {
		t.Fatalf("/healthz while draining: %d", x.status)
	}
	if x := callModern(t, s.URL, "small_hello", `{}`); !strings.Contains(x.body, "hello from small") {
		t.Fatalf("call while draining: %d %s", x.status, x.body)
	}
}

func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	// "--http=…" in one argument: startServe would wait for a text log line.
	s := startServe(t, "--tools", opsTools(t), "--http=127.0.0.1:0", "--cache-dir", compileCache, "--watch=false",
		"--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	re := regexp.MustCompile(`"msg":"wasmcp serving","listeners":\["(http://\S+/mcp)","(http://\S+)/metrics"\],"modules":2,"tools":17`)
	var side string
	waitFor(t, 10*time.Second, "the metrics listener", func() bool {
		if m := re.FindStringSubmatch(s.Stderr.String()); m != nil {
			s.URL, side = m[1], m[2]
			return true
		}
		return false
	})
	if got := value(scrape(t, side), "wasmcp_tools", nil); got < 17 {
		t.Fatalf("wasmcp_tools = %v on --metrics-addr", got)
	}
	if x := httpDo(t, http.MethodGet, side+"/readyz", nil, ""); x.status != 200 {
		t.Fatalf("/readyz on --metrics-addr: %d %s", x.status, x.body)
	}
	// With --metrics-addr the MCP listener keeps the probes, not the metrics.
	base := strings.TrimSuffix(s.URL, "/mcp")
	if x := httpDo(t, http.MethodGet, base+"/metrics", nil, ""); x.status != 404 {
		t.Fatalf("/metrics on the MCP listener: %d", x.status)
	}
	if x := httpDo(t, http.MethodGet, base+"/readyz", nil, ""); x.status != 200 {
		t.Fatalf("/readyz on the MCP listener: %d", x.status)
	}
}

// While the initial load runs, /readyz answers 503 naming the catalog and
// /healthz answers 200; once the load ends (here: the slow module refused
// at its describe deadline) /readyz answers 200. Probed on the
// --metrics-addr listener, which serves from before the load.
func TestReadinessDuringStartup(t *testing.T) {
	t.Parallel()
	dir := opsTools(t)
	if err := os.WriteFile(filepath.Join(dir, "spin.wasm"), guestbuild.SpinningStart(), 0o644); err != nil {
		t.Fatal(err)
	}
	const describe = 10 * time.Second // the load's length: the probes below run well within it
	s := startServeLoading(t, "--tools", dir, "--stdio", "--cache-dir", "-", "--watch=false",
		"--metrics-addr", "127.0.0.1:0", "--describe-timeout", describe.String())
	re := regexp.MustCompile(`msg="serving metrics and probes" url=(http://\S+)/metrics`)
	var side string
	waitFor(t, 30*time.Second, "the metrics listener", func() bool {
		if m := re.FindStringSubmatch(s.Stderr.String()); m != nil {
			side = m[1]
			return true
		}
		return false
	})
	start := time.Now()
	x := httpDo(t, http.MethodGet, side+"/readyz", nil, "")
	if x.status != 503 || !strings.Contains(x.body, "catalog not loaded") {
		t.Fatalf("/readyz during the initial load (%s after the listener): %d %q", time.Since(start), x.status, x.body)
	}
	if x := httpDo(t, http.MethodGet, side+"/healthz", nil, ""); x.status != 200 || strings.TrimSpace(x.body) != "ok" {
		t.Fatalf("/healthz during the initial load: %d %q", x.status, x.body)
	}
	if strings.Contains(s.Stderr.String(), "modules loaded") {
		t.Fatal("the load ended before the probes: the test did not test the start-up")
	}
	waitFor(t, describe+60*time.Second, "/readyz once loaded", func() bool {
		return httpDo(t, http.MethodGet, side+"/readyz", nil, "").status == 200
	})
	// The load's end is logged just before readiness (the log may trail
	// through the pipe).
	waitFor(t, 10*time.Second, "the end of the load in the log", func() bool {
		logs := s.Stderr.String()
		return strings.Contains(logs, "modules loaded") && strings.Contains(logs, "module refused")
	})
	if x := httpDo(t, http.MethodGet, side+"/healthz", nil, ""); x.status != 200 {
		t.Fatalf("/healthz once loaded: %d", x.status)
	}
}
