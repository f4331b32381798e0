package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/telemetry"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// DefaultMetricsAddr is where metrics go when HTTP binds beyond loopback
// and OpsConfig.MetricsAddr is not set: loopback, so they are never public
// by accident.
const DefaultMetricsAddr = "127.0.0.1:9464"

// OpsConfig is what an operator sees: metrics, probes and traces (serve's
// --metrics-addr, --otlp-*, --trace-sample and --shutdown-drain flags).
type OpsConfig struct {
	// MetricsAddr serves /metrics, /healthz and /readyz on an address of
	// their own ("off" for none); default: on the HTTP listener when it
	// binds loopback without authentication, else DefaultMetricsAddr.
	MetricsAddr string
	// OTLPEndpoint exports traces there over OTLPProtocol
	// (telemetry.ProtocolHTTP or ProtocolGRPC); "" for no tracing.
	OTLPEndpoint, OTLPProtocol string
	// TraceSample is the fraction of new traces kept.
	TraceSample float64
	// Drain is how long /readyz answers 503 at shutdown while the HTTP
	// listener still serves.
	Drain time.Duration
}

// ops is the running server's metrics and probes.
type ops struct {
	metrics *telemetry.Metrics
	health  telemetry.Health
	log     *slog.Logger
	onMain  bool         // /metrics is served on the --http listener
	side    *http.Server // the --metrics-addr server, if any
	sideURL string       // its base URL
	tracing *telemetry.Tracing
	flush   func(context.Context) error // ends the trace export
}

func (f *OpsConfig) newOps(ctx context.Context, log *slog.Logger, metrics *telemetry.Metrics, version string) (*ops, error) {
	o := &ops{metrics: metrics, log: log}
	if f.OTLPEndpoint != "" {
		if f.TraceSample < 0 || f.TraceSample > 1 {
			return nil, fmt.Errorf("--trace-sample %v: want a fraction between 0 and 1", f.TraceSample)
		}
		t, flush, err := telemetry.StartOTLP(ctx, telemetry.TracingConfig{Endpoint: f.OTLPEndpoint, Protocol: f.OTLPProtocol, Sample: f.TraceSample, Version: version})
		if err != nil {
			return nil, fmt.Errorf("--otlp-endpoint: %w", err)
		}
		o.tracing, o.flush = t, flush
		log.Info("exporting traces", "otlp", f.OTLPEndpoint, "protocol", f.OTLPProtocol, "sample", f.TraceSample)
	}
	return o, nil
}

// tracer is the server's tracer, nil (no cost) without --otlp-endpoint.
func (o *ops) tracer() protocol.Tracer {
	if o.tracing == nil {
		return nil
	}
	return o.tracing
}

// routes are the operator's endpoints.
func (o *ops) routes(metrics bool) map[string]http.Handler {
	r := map[string]http.Handler{"/healthz": o.health.Healthz(), "/readyz": o.health.Readyz()}
	if metrics {
		r["/metrics"] = o.metrics.Handler()
	}
	return r
}

// listen starts the --metrics-addr server as decided from the flags, the
// --http address ("" for stdio) and whether HTTP clients authenticate.
// /metrics names every module and tool, those a grant hides from some
// principal too, and answers without a credential: it goes on the MCP
// listener only on a loopback bind without --auth; with --auth (or beyond
// loopback) it is served on its own listener, defaultMetricsAddr unless
// --metrics-addr says otherwise, for the operator's scraper alone.
func (o *ops) listen(f *OpsConfig, httpAddr string, authenticated bool) error {
	addr := f.MetricsAddr
	explicit := addr != ""
	if addr == "off" {
		return nil
	}
	if !explicit {
		if httpAddr == "" {
			return nil // stdio: nothing unless asked
		}
		if loopbackAddr(httpAddr) && !authenticated {
			o.onMain = true
			return nil
		}
		addr = DefaultMetricsAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if explicit {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		o.log.Warn("metrics not served: the default metrics address is taken (set --metrics-addr)", "addr", addr, "err", err)
		return nil
	}
	mux := http.NewServeMux()
	for p, h := range o.routes(true) {
		mux.Handle(p, h)
	}
	o.side = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		ErrorLog: slog.NewLogLogger(o.log.Handler(), slog.LevelDebug)}
	go func() {
		if err := o.side.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.log.Error("metrics server stopped", "err", err)
		}
	}()
	o.sideURL = "http://" + ln.Addr().String()
	o.log.Info("serving metrics and probes", "url", o.sideURL+"/metrics")
	return nil
}

// httpOptions adds the probes (and /metrics on a loopback bind) to the MCP
// listener, and ties readiness to it.
func (o *ops) httpOptions(f *OpsConfig, started func(url string)) func(*mcphttp.Options) {
	return func(opts *mcphttp.Options) {
		opts.ExtraRoutes = o.routes(o.onMain)
		opts.Started = func(h *mcphttp.Handler) {
			o.metrics.WatchHTTP(h)
			o.health.Listening(true)
			scheme := "http"
			if opts.TLSCert != "" {
				scheme = "https"
			}
			started(scheme + "://" + opts.Addr + "/mcp")
		}
		opts.Draining = o.health.Draining
		opts.DrainDelay = f.Drain
		if o.tracing != nil {
			opts.Wrap = o.tracing.Wrap
		}
	}
}

// close stops the --metrics-addr server and flushes the traces.
func (o *ops) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if o.side != nil {
		_ = o.side.Shutdown(ctx)
	}
	if o.flush != nil {
		if err := o.flush(ctx); err != nil {
			o.log.Warn("flushing traces", "err", err)
		}
	}
}

// summary logs the start-up summary line: what serves where, under which
// limits.
func (o *ops) summary(srv *protocol.Server, listeners []string, cfg *Config, shared bool, auth string) {
	cat := srv.Catalog()
	tools, resources, prompts := cat.Counts()
	store := "bbolt"
	switch {
	case shared:
		store = "redis"
	case cfg.Tasks.DataDir == "-":
		store = "memory"
	}
	l := cfg.Engine.Limits
	o.log.Info("wasmcp serving",
		"listeners", listeners,
		"modules", len(cat.Modules()), "tools", tools, "resources", resources, "prompts", prompts,
		"limits", fmt.Sprintf("memory=%s timeout=%s output=%s", host.FormatBytes(int64(l.MemoryBytes)), l.Timeout, host.FormatBytes(l.OutputBytes)),
		"auth", auth, "store", store, "version", cfg.Version)
}

// listenerURLs are the operator's URLs besides the MCP endpoint.
func (o *ops) listenerURLs() []string {
	if o.sideURL == "" {
		return nil
	}
	return []string{o.sideURL + "/metrics"}
}

// outboundObserver tells the metrics, and the tracing once it is set up
// (after the engine it observes is made), of each guest's outbound HTTP
// request.
type outboundObserver struct {
	metrics *telemetry.Metrics
	tracing atomic.Pointer[telemetry.Tracing]
}

// RequestDone implements egress.Observer.
func (o *outboundObserver) RequestDone(ctx context.Context, d *egress.Done) {
	o.metrics.RequestDone(ctx, d)
	if t := o.tracing.Load(); t != nil {
		t.RequestDone(ctx, d)
	}
}

// startSummary logs the start-up summary once both the listener serves and
// the initial load has ended, whichever comes last.
type startSummary struct {
	log func(listeners []string, who string)

	mu        sync.Mutex
	listeners []string
	who       string
	done      bool // the load ended
	logged    bool
}

func (s *startSummary) listening(listeners []string, who string) {
	s.mu.Lock()
	s.listeners, s.who = listeners, who
	s.mu.Unlock()
	s.try()
}

func (s *startSummary) loaded() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	s.try()
}

func (s *startSummary) try() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logged || !s.done || s.listeners == nil {
		return
	}
	s.logged = true
	s.log(s.listeners, s.who)
}
