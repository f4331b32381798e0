package telemetry

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// Namespace prefixes every metric's name.
const Namespace = "wasmcp"

// Metrics holds the server's Prometheus metrics. Its labels are module and
// tool names from the loaded catalog (never arguments, sessions or
// principals), so their number is bounded by what the operator deploys.
// It is safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	calls       *prometheus.CounterVec   // module, tool, outcome, limit
	duration    *prometheus.HistogramVec // module, tool
	instantiate *prometheus.HistogramVec // module
	gateWait    *prometheus.HistogramVec // module
	output      *prometheus.CounterVec   // module, tool
	result      *prometheus.CounterVec   // module, tool
	tasks       *prometheus.CounterVec   // status
	reloads     prometheus.Counter
	refusals    prometheus.Counter
	retrying    *prometheus.GaugeVec // module
	refusedNow  *prometheus.GaugeVec // module, reason
	loadTime    prometheus.Histogram
	wasmBytes   *prometheus.GaugeVec // module
	compileTime *prometheus.HistogramVec
	codeBytes   *prometheus.GaugeVec
	authFails   *prometheus.CounterVec   // provider, reason
	outCalls    *prometheus.CounterVec   // module, outcome, status
	outBytes    *prometheus.CounterVec   // module, direction
	outDuration *prometheus.HistogramVec // module

	series sync.Map // seriesKey → *series

	srv  atomic.Pointer[protocol.Server]
	http atomic.Pointer[mcphttp.Handler]
}

type seriesKey struct{ module, tool string }

// series are the per-tool children looked up once.
type series struct {
	duration    prometheus.Observer
	instantiate prometheus.Observer
	gateWait    prometheus.Observer
	output      prometheus.Counter
	result      prometheus.Counter
	memory      atomic.Uint64 // high-water mark, bytes
}

// NewMetrics creates the metrics, with the Go runtime and process
// collectors.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	durBuckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "tool_calls_total",
		Help: "tools/call of loaded tools by outcome: ok, tool_error, error, trap, limit (limit names which), cancelled, refused, input."},
		[]string{"module", "tool", "outcome", "limit"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "tool_call_duration_seconds",
		Help: "Time of a tools/call's guest call, queueing for an instance included.", Buckets: durBuckets},
		[]string{"module", "tool"})
	m.instantiate = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "instantiate_duration_seconds",
		Help: "Time to create a guest instance.", Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25}},
		[]string{"module"})
	m.gateWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "gate_wait_seconds",
		Help: "Time a call waited for an instance slot (policy max_instances).", Buckets: durBuckets},
		[]string{"module"})
	m.output = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "guest_output_bytes_total",
		Help: "Bytes guests wrote to stdout and stderr."}, []string{"module", "tool"})
	m.result = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "tool_result_bytes_total",
		Help: "Bytes of tool results sent to clients."}, []string{"module", "tool"})
	m.tasks = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "task_transitions_total",
		Help: "Tasks created or moved, by the status they reached."}, []string{"status"})
	m.reloads = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "catalog_publications_total",
		Help: "Catalogs installed: the initial load and every reload that changed something."})
	m.refusals = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "module_refusals_total",
		Help: "Module files refused at load or reload."})
	m.retrying = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "module_retrying",
		Help: "1 for each module whose load a busy machine cut (a run at load reached its wall-clock ceiling with its guest under its own deadline); it is loaded again after a backoff."},
		[]string{"module"})
	m.refusedNow = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "module_refused",
		Help: "1 for each module file not served as it is now (a load error, or a name another module serves), with the reason."},
		[]string{"module", "reason"})
	m.loadTime = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "module_load_duration_seconds",
		Help:    "Time to load a module: compile (or read the compilation cache), instrument and describe.",
		Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}})
	m.wasmBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "module_wasm_bytes",
		Help: "Size of each loaded module's WebAssembly binary."}, []string{"module"})
	m.compileTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "module_compile_duration_seconds",
		Help:    "Time to compile a module's code on its first call (or after its code was closed under --code-memory), the compilation cache's read included.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}, []string{"module"})
	m.codeBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "module_code_bytes",
		Help: "Compiled code of each module as the host measures it (what --code-memory counts), from its last compilation."}, []string{"module"})
	m.authFails = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "auth_refusals_total",
		Help: "HTTP requests refused by authentication, by provider and reason: missing, malformed, invalid, forbidden, upstream, limited."},
		[]string{"provider", "reason"})
	m.outCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "outbound_requests_total",
		Help: "Guests' outbound HTTP requests, by module and outcome (ok, or the reason it failed: policy_refused, invalid_request, dns, connect, timeout, too_large, tls, protocol) and the class of the last status (2xx…, or none)."},
		[]string{"module", "outcome", "status"})
	m.outBytes = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "outbound_bytes_total",
		Help: "Body bytes of guests' outbound HTTP requests, by module and direction (out: sent, in: received)."},
		[]string{"module", "direction"})
	m.outDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "outbound_request_duration_seconds",
		Help: "Time of a guest's outbound HTTP request, redirects included.", Buckets: durBuckets},
		[]string{"module"})
	m.reg.MustRegister(m.calls, m.duration, m.instantiate, m.gateWait, m.output, m.result, m.tasks,
		m.reloads, m.refusals, m.retrying, m.refusedNow, m.loadTime, m.wasmBytes, m.compileTime, m.codeBytes, m.authFails, m.outCalls, m.outBytes, m.outDuration, (*gauges)(m),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry holding the metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ModuleCompiled records a module's compilation: how long it took and
// the compiled code's size (host.Config.OnCompiled).
func (m *Metrics) ModuleCompiled(module string, took time.Duration, codeBytes int64) {
	m.compileTime.WithLabelValues(module).Observe(took.Seconds())
	m.codeBytes.WithLabelValues(module).Set(float64(codeBytes))
}

// WatchCodeMemory makes the metrics report the compiled code held and its
// budget (host.Engine.CodeMemory); call it once.
func (m *Metrics) WatchCodeMemory(usage func() (used, budget int64)) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "code_memory_bytes",
			Help: "Compiled code the engine holds for all modules (--code-memory counts it)."},
			func() float64 { used, _ := usage(); return float64(used) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "code_memory_budget_bytes",
			Help: "The --code-memory budget (0: none)."},
			func() float64 { _, budget := usage(); return float64(max(budget, 0)) }))
}

// WatchLoadsWaiting makes the metrics report the loads waiting for room in
// the code budget (host.Engine.LoadsWaiting); call it once.
func (m *Metrics) WatchLoadsWaiting(waiting func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "loads_waiting",
		Help: "Module loads (compilations, snapshot start-ups) waiting for room in --code-memory."},
		func() float64 { return float64(waiting()) }))
}

// WatchServer makes the metrics report srv's catalog (modules, tools,
// instance-gate queues), listen subscriptions and active tasks.
func (m *Metrics) WatchServer(srv *protocol.Server) { m.srv.Store(srv) }

// WatchHTTP makes the metrics report h's sessions and SSE streams; pass it
// as mcphttp.Options.Started.
func (m *Metrics) WatchHTTP(h *mcphttp.Handler) { m.http.Store(h) }

func (m *Metrics) seriesFor(module, tool string) *series {
	k := seriesKey{module, tool}
	if s, ok := m.series.Load(k); ok {
		return s.(*series)
	}
	s := &series{
		duration:    m.duration.WithLabelValues(module, tool),
		instantiate: m.instantiate.WithLabelValues(module),
		gateWait:    m.gateWait.WithLabelValues(module),
		output:      m.output.WithLabelValues(module, tool),
		result:      m.result.WithLabelValues(module, tool),
	}
	got, _ := m.series.LoadOrStore(k, s)
	return got.(*series)
}

// ToolCallDone implements protocol.Observer.
func (m *Metrics) ToolCallDone(_ context.Context, c *protocol.ToolCall) {
	m.calls.WithLabelValues(c.Module, c.Tool, string(c.Outcome), c.Limit).Inc()
	if c.Stats == nil {
		return
	}
	s := m.seriesFor(c.Module, c.Tool)
	s.duration.Observe(c.Duration.Seconds())
	s.gateWait.Observe(c.Stats.QueueWait.Seconds())
	if c.Stats.Instantiate > 0 {
		s.instantiate.Observe(c.Stats.Instantiate.Seconds())
	}
	s.output.Add(float64(c.Stats.OutputBytes))
	s.result.Add(float64(c.ResultBytes))
	for mem := c.Stats.MemoryBytes; ; {
		old := s.memory.Load()
		if mem <= old || s.memory.CompareAndSwap(old, mem) {
			break
		}
	}
}

// TaskChanged implements protocol.Observer.
func (m *Metrics) TaskChanged(status string) { m.tasks.WithLabelValues(status).Inc() }

// AuthRefused implements auth.Observer.
func (m *Metrics) AuthRefused(provider, reason string) {
	m.authFails.WithLabelValues(provider, reason).Inc()
}

// RequestDone implements egress.Observer (host.Config.Egress.Observer).
func (m *Metrics) RequestDone(_ context.Context, d *egress.Done) {
	m.outCalls.WithLabelValues(d.Module, d.Outcome, statusClass(d.Status)).Inc()
	if d.BytesOut > 0 {
		m.outBytes.WithLabelValues(d.Module, "out").Add(float64(d.BytesOut))
	}
	if d.BytesIn > 0 {
		m.outBytes.WithLabelValues(d.Module, "in").Add(float64(d.BytesIn))
	}
	m.outDuration.WithLabelValues(d.Module).Observe(d.Duration.Seconds())
}

// statusClass is the label of an HTTP status: "2xx" and so on, "none"
// without a response (or a status outside 100–599).
func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "none"
	}
	return [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}[code/100-1]
}

// ModuleLoaded implements registry.Observer.
func (m *Metrics) ModuleLoaded(module string, took time.Duration, wasmBytes int) {
	m.loadTime.Observe(took.Seconds())
	m.wasmBytes.WithLabelValues(module).Set(float64(wasmBytes))
}

// ModuleRefused implements registry.Observer.
func (m *Metrics) ModuleRefused() { m.refusals.Inc() }

// ModuleRetrying implements registry.RetryObserver.
func (m *Metrics) ModuleRetrying(module string, retrying bool) {
	if retrying {
		m.retrying.WithLabelValues(module).Set(1)
	} else {
		m.retrying.DeleteLabelValues(module)
	}
}

// ModuleRefusedNow implements registry.RefusalObserver.
func (m *Metrics) ModuleRefusedNow(module, reason string, refused bool) {
	m.refusedNow.DeletePartialMatch(prometheus.Labels{"module": module})
	if refused {
		m.refusedNow.WithLabelValues(module, reason).Set(1)
	}
}

// CatalogPublished implements registry.Observer.
func (m *Metrics) CatalogPublished() { m.reloads.Inc() }

// gauges is the collector of the values read when scraped.
type gauges Metrics

var (
	descModules   = prometheus.NewDesc(Namespace+"_modules", "Modules in the catalog.", nil, nil)
	descTools     = prometheus.NewDesc(Namespace+"_tools", "Tools in the catalog.", nil, nil)
	descQueue     = prometheus.NewDesc(Namespace+"_gate_queue_depth", "Calls waiting for an instance slot.", []string{"module"}, nil)
	descMemory    = prometheus.NewDesc(Namespace+"_instance_memory_high_water_bytes", "Largest linear memory an instance of the tool ended with.", []string{"module", "tool"}, nil)
	descTasks     = prometheus.NewDesc(Namespace+"_tasks_active", "Tasks running or waiting for input in this process.", nil, nil)
	descListeners = prometheus.NewDesc(Namespace+"_listen_subscriptions", "subscriptions/listen streams open.", nil, nil)
	descSessions  = prometheus.NewDesc(Namespace+"_http_sessions", "Legacy HTTP sessions open.", nil, nil)
	descStreams   = prometheus.NewDesc(Namespace+"_http_sse_streams", "Standalone SSE streams open.", nil, nil)
)

// Describe implements prometheus.Collector.
func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descModules, descTools, descQueue, descMemory, descTasks, descListeners, descSessions, descStreams} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	g.series.Range(func(k, v any) bool {
		key := k.(seriesKey)
		ch <- prometheus.MustNewConstMetric(descMemory, prometheus.GaugeValue, float64(v.(*series).memory.Load()), key.module, key.tool)
		return true
	})
	if srv := g.srv.Load(); srv != nil {
		cat := srv.Catalog()
		mods := cat.Modules()
		nTools, _, _ := cat.Counts()
		ch <- prometheus.MustNewConstMetric(descModules, prometheus.GaugeValue, float64(len(mods)))
		ch <- prometheus.MustNewConstMetric(descTools, prometheus.GaugeValue, float64(nTools))
		for _, mod := range mods {
			if q, ok := mod.(interface{ Queued() int }); ok {
				ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(q.Queued()), mod.Name())
			}
		}
		all, _ := srv.Tasks().Running("")
		ch <- prometheus.MustNewConstMetric(descTasks, prometheus.GaugeValue, float64(all))
		ch <- prometheus.MustNewConstMetric(descListeners, prometheus.GaugeValue, float64(srv.Listeners()))
	}
	if h := g.http.Load(); h != nil {
		st := h.Stats()
		ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(st.Sessions))
		ch <- prometheus.MustNewConstMetric(descStreams, prometheus.GaugeValue, float64(st.Streams))
	}
}
