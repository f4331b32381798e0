package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/telemetry"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// defaultMetricsAddr is where metrics go when --http binds beyond loopback
// and --metrics-addr is not given: loopback, so they are never public by
// accident.
const defaultMetricsAddr = "127.0.0.1:9464"

// opsFlags are serve's flags for what an operator sees: metrics and probes.
type opsFlags struct {
	metricsAddr  string
	drain        time.Duration
	otlpEndpoint string
	otlpProtocol string
	traceSample  float64
}

func (f *opsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", `serve /metrics, /healthz and /readyz on this address too (e.g. 127.0.0.1:9464; "off" for none); default: on the --http listener when it binds loopback without --auth, else `+defaultMetricsAddr+` (/metrics names every tool, grant-hidden ones too, and asks no credential)`)
	fs.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", "export traces (a span per request, tool call and guest instance) over OTLP to this URL, e.g. http://127.0.0.1:4318 (OTLP/HTTP) or http://127.0.0.1:4317 (--otlp-protocol grpc; https for TLS); default: no tracing")
	fs.StringVar(&f.otlpProtocol, "otlp-protocol", telemetry.ProtocolHTTP, "OTLP protocol of --otlp-endpoint: "+telemetry.ProtocolHTTP+" or "+telemetry.ProtocolGRPC)
	fs.Float64Var(&f.traceSample, "trace-sample", 1, "fraction of new traces kept with --otlp-endpoint (a client's sampled trace context is followed)")
	fs.DurationVar(&f.drain, "shutdown-drain", 0, "on SIGINT/SIGTERM, how long /readyz answers 503 while the HTTP listener still serves, before the graceful shutdown (let load balancers notice)")
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

func (f *opsFlags) newOps(ctx context.Context, log *slog.Logger, metrics *telemetry.Metrics) (*ops, error) {
	o := &ops{metrics: metrics, log: log}
	if f.otlpEndpoint != "" {
		if f.traceSample < 0 || f.traceSample > 1 {
			return nil, fmt.Errorf("--trace-sample %v: want a fraction between 0 and 1", f.traceSample)
		}
		t, flush, err := telemetry.StartOTLP(ctx, telemetry.TracingConfig{Endpoint: f.otlpEndpoint, Protocol: f.otlpProtocol, Sample: f.traceSample, Version: version})
		if err != nil {
			return nil, fmt.Errorf("--otlp-endpoint: %w", err)
		}
		o.tracing, o.flush = t, flush
		log.Info("exporting traces", "otlp", f.otlpEndpoint, "protocol", f.otlpProtocol, "sample", f.traceSample)
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
func (o *ops) listen(f *opsFlags, httpAddr string, authenticated bool) error {
	addr := f.metricsAddr
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
		addr = defaultMetricsAddr
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
func (o *ops) httpOptions(f *opsFlags, started func(url string)) func(*mcphttp.Options) {
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
		opts.DrainDelay = f.drain
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
func (o *ops) summary(srv *protocol.Server, listeners []string, ef *engineFlags, tf *taskFlags, auth string) {
	cat := srv.Catalog()
	tools, resources, prompts := cat.Counts()
	store := "bbolt"
	switch {
	case tf.redis != nil:
		store = "redis"
	case tf.dataDir == "-":
		store = "memory"
	}
	o.log.Info("wasmcp serving",
		"listeners", listeners,
		"modules", len(cat.Modules()), "tools", tools, "resources", resources, "prompts", prompts,
		"limits", fmt.Sprintf("memory=%s timeout=%s output=%s", host.FormatBytes(int64(ef.memory)), ef.timeout, host.FormatBytes(int64(ef.output))),
		"auth", auth, "store", store, "version", version)
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
