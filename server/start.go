package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/heapfloor"
	"github.com/wasmcp/wasmcp/internal/logbatch"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/registry"
	"github.com/wasmcp/wasmcp/replica"
	"github.com/wasmcp/wasmcp/tasks"
	"github.com/wasmcp/wasmcp/telemetry"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
	"github.com/wasmcp/wasmcp/transport/stdio"
)

// run is what one Run builds, step by step, in the order of the start.
type run struct {
	s    *Server
	cfg  *Config
	log  *slog.Logger
	auth AuthConfig // with the observer and the shared limiter set

	metrics  *telemetry.Metrics
	outbound *outboundObserver
	engine   *host.Engine
	ops      *ops
	taskMgr  *tasks.Manager
	redis    *replica.Redis
	stateKey []byte
	srv      *protocol.Server
	pull     *pulledTools
	reg      *registry.Registry
	summary  *startSummary
	httpLn   net.Listener
	httpOpts mcphttp.Options
}

// startEngine makes the metrics and the engine they observe.
func startEngine(_ context.Context, r *run, c *cleanups) error {
	r.metrics = telemetry.NewMetrics()
	r.outbound = &outboundObserver{metrics: r.metrics}
	ec := r.cfg.Engine
	ec.Logger = r.log
	ec.Principal = principalName
	ec.Egress.Observer = r.outbound
	ec.OnCompiled = r.metrics.ModuleCompiled
	engine, err := host.NewEngine(ec)
	if err != nil {
		return err
	}
	r.engine = engine
	c.add(func() { engine.Close(context.Background()) })
	r.metrics.WatchCodeMemory(engine.CodeMemory)
	r.metrics.WatchLoadsWaiting(engine.LoadsWaiting)
	if !heapfloor.CeilingFromEnvironment() {
		// The Go memory limit follows the budgets (GOMEMLIMIT, when set,
		// is the operator's choice).
		c.add(heapfloor.StartCeiling(engine.MemoryCeiling, ceilingRoom).Stop)
	}
	if len(r.cfg.EnvUsed) > 0 {
		r.log.Info("settings from the environment", "vars", r.cfg.EnvUsed)
	}
	return nil
}

// ceilingRoom is the least room the memory limit leaves above the live
// heap (heapfloor leaves a quarter of the live heap when that is more):
// when something the budgets do not count is live, the collector runs as
// often as this allows, not back to back.
const ceilingRoom = 64 << 20

// startOps starts the trace export, when asked for.
func startOps(ctx context.Context, r *run, _ *cleanups) error {
	o, err := r.cfg.Ops.newOps(ctx, r.log, r.metrics, r.cfg.Version)
	if err != nil {
		return err
	}
	r.ops = o
	if o.tracing != nil {
		r.outbound.tracing.Store(o.tracing)
	}
	return nil
}

// startTasks opens the task store; a Redis store shared by replicas also
// gives the sealing key (unless a key file did), the per-principal caps'
// counters and the fan-out of announcements.
func startTasks(ctx context.Context, r *run, c *cleanups) error {
	m, redis, err := r.cfg.Tasks.manager(ctx, r.cfg.Tools, r.log)
	if err != nil {
		return err
	}
	r.taskMgr, r.redis = m, redis
	r.ops.health.StoreOpen(true)
	// Ends the guests of running tasks (marked failed) before the engine
	// closes.
	c.add(func() { m.Close(context.Background(), 5*time.Second) })
	r.stateKey = r.s.stateKey
	if r.stateKey == nil && redis != nil {
		// Replicas sharing a store share the sealing key too.
		if r.stateKey, err = redis.SharedKey(ctx, "state-key", minStateKey); err != nil {
			return fmt.Errorf("--store: the shared state key (or give --state-key-file): %w", err)
		}
	}
	r.auth.Observer = r.metrics
	if redis != nil {
		r.auth.shared = redis.Limiter() // the per-principal caps count across replicas
	}
	return nil
}

// startProtocol makes the protocol server: the access grants, the audit
// trail, metrics and tracing, tasks and the fan-out.
func startProtocol(ctx context.Context, r *run, c *cleanups) error {
	var fanout *redisFanout
	var fo protocol.Fanout
	if r.redis != nil {
		fanout = newRedisFanout(r.redis, r.log)
		fo = fanout
	}
	// The audit trail (one line a guest call) is written in batches: a
	// call appends its line to a buffer instead of taking the log's lock
	// and making a write system call (internal/logbatch).
	auditOut := logbatch.New(r.cfg.Stderr, 0, 0)
	c.add(func() { auditOut.Close() })
	auditLog, err := NewLogger(auditOut, r.cfg.LogLevel, r.cfg.LogFormat)
	if err != nil {
		return err
	}
	r.srv = protocol.NewServer(protocol.Options{Name: r.cfg.Name, Version: r.cfg.Version, Instructions: r.cfg.Instructions, Logger: r.log,
		StateKey: r.stateKey, Tasks: r.taskMgr, TaskInline: r.cfg.Tasks.inline(), Fanout: fo,
		Access: moduleAccess, StepUp: moduleStepUp, GuestMeta: guestPrincipal, Audit: r.auth.audit(auditLog), Observer: r.ops.metrics, Tracer: r.ops.tracer()})
	r.ops.metrics.WatchServer(r.srv)
	if fanout != nil {
		fctx, stop := context.WithCancel(ctx)
		c.add(stop)
		go fanout.deliver(fctx, r.srv)
	}
	return nil
}

// startRegistry prepares the pulled tools and the registry. The tools a
// lock file pins (docs/registry-tools.md) are fetched, verified and
// installed into the tools directory before the first load, from the
// cache when they are there.
func startRegistry(_ context.Context, r *run, c *cleanups) error {
	pull, err := newPulledTools(r.cfg.Tools, &r.cfg.Pull, &r.cfg.Engine, r.log)
	if err != nil {
		return err
	}
	r.pull = pull
	c.add(pull.close)
	if pull != nil {
		// An update declaring a name not approved waits for wasmcp approve.
		pull.syncer.Describe = PulledNames(r.engine)
		// A pulled tool refused reaches the clients that asked for logs,
		// as a module refused at load does.
		srv := r.srv
		pull.syncer.Refused = func(tool, check, reason string, serving bool) {
			srv.Warn(map[string]string{"event": "pulled_tool_refused", "tool": tool, "check": check,
				"reason": reason, "serving": strconv.FormatBool(serving)})
		}
	}
	r.reg = registry.New(r.cfg.Tools, r.engine, r.srv, r.log)
	r.reg.SetObserver(r.ops.metrics)
	// A pulled module serves only the names the operator approved.
	r.reg.SetPulledCheck(servedNamesCheck(r.cfg.Tools))
	if r.cfg.Skills != "" {
		r.reg.ServeSkills(r.cfg.Skills)
	}
	return nil
}

// startListeners starts the operator's listener and binds HTTP. A
// --metrics-addr listener answers /readyz (not ready) during the load.
// HTTP binds before the modules load: a port in use is reported at once,
// not after every module has compiled.
func startListeners(_ context.Context, r *run, c *cleanups) error {
	c.add(r.ops.close)
	authenticated := r.auth.Provider != "none" && r.auth.Provider != ""
	if err := r.ops.listen(&r.cfg.Ops, r.cfg.HTTPAddr, authenticated); err != nil {
		return err
	}
	// The summary line is logged once the listener serves and the initial
	// load has ended (its counts are the loaded catalog's).
	r.summary = &startSummary{log: func(listeners []string, who string) {
		r.ops.summary(r.srv, listeners, r.cfg, r.redis != nil, who)
	}}
	if r.cfg.HTTPAddr == "" {
		return nil
	}
	ln, opts, err := listenHTTP(r.cfg.HTTPAddr, &r.cfg.HTTP, &r.auth, r.cfg.MaxBatch, r.log, r.ops.httpOptions(&r.cfg.Ops, func(url string) {
		r.summary.listening(append([]string{url}, r.ops.listenerURLs()...), r.auth.Provider)
	}))
	if err != nil {
		return err
	}
	r.httpLn, r.httpOpts = ln, opts
	c.add(func() { ln.Close() })
	return nil
}

// serve runs the initial load beside serving. Modules whose description
// is cached are listed without compiling, the others compile
// concurrently. Until the load ends, initialize and ping are answered at
// once, a call waits only for its own module, and a list waits for the
// load (at most ReadyWait); /readyz answers 503 (see
// protocol.Server.StartLoading). The end of ctx ends the process at once,
// even mid-compile. A load that cannot read the directory ends serving.
func (r *run) serve(ctx context.Context, c *cleanups) error {
	start := time.Now()
	serveCtx, stopServing := context.WithCancelCause(ctx)
	c.add(func() { stopServing(nil) })
	loadDone := r.srv.StartLoading(r.cfg.ReadyWait)
	c.add(loadDone)
	var loadErr error
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		r.pull.sync(ctx, false)
		err := r.reg.Load(ctx)
		if ctx.Err() != nil {
			r.srv.InterruptLoading() // calls waiting for a module hear of the shutdown
		}
		loadDone()
		if err != nil {
			loadErr = err
			stopServing(err)
			return
		}
		if ctx.Err() == nil {
			r.log.Info("modules loaded", "took", time.Since(start).Round(time.Millisecond))
			r.ops.health.CatalogLoaded()
			r.summary.loaded()
		}
	}()
	// The error of the initial load, when it ended serving.
	failed := func(err error) error {
		select {
		case <-loaded:
			if loadErr != nil {
				return loadErr
			}
		default:
		}
		return err
	}
	if r.httpLn != nil {
		return failed(serveHTTP(serveCtx, r.srv, r.httpLn, r.httpOpts, r.log))
	}
	err := r.serveStdio(serveCtx)
	if err == nil {
		// stdin ended: the process ends once the initial load has (as it
		// did when serving began after the load), so that `wasmcp serve`
		// with stdin at EOF still fills the caches; the end of ctx ends it
		// at once.
		select {
		case <-loaded:
		case <-ctx.Done():
		}
	}
	return failed(err)
}

// serveStdio serves MCP on the configured stdin and stdout.
func (r *run) serveStdio(ctx context.Context) error {
	r.ops.health.Listening(true) // stdin is open
	r.summary.listening(append([]string{"stdio"}, r.ops.listenerURLs()...), "local user (stdio)")
	r.log.Info("serving MCP on stdio", "tools", r.cfg.Tools)
	return stdio.Serve(ctx, r.srv, r.cfg.Stdin, r.cfg.Stdout, stdio.Options{Workers: r.cfg.Workers, MaxBatch: r.cfg.MaxBatch,
		MaxMessage: int(r.cfg.HTTP.MaxBody), Logger: r.log, Principal: auth.LocalUser().Name})
}
