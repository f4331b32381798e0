package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/heapfloor"
	"github.com/wasmcp/wasmcp/internal/logbatch"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/registry"
	"github.com/wasmcp/wasmcp/telemetry"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
	"github.com/wasmcp/wasmcp/transport/stdio"
)

// engineFlags are the flags every command that loads modules shares.
type engineFlags struct {
	cacheDir     string
	cacheMax     byteSize
	memory       mibSize
	timeout      time.Duration
	output       mibSize
	logLevel     string
	logFormat    string
	instrument   bool
	budget       int64
	httpProxy    bool
	codeMemory   byteSize
	compilations int
	describe     time.Duration
	snapTimeout  time.Duration
	maxFunctions uint
	maxCode      byteSize
	// interpFirst is --interpreter-first, a flag of serve only (a
	// one-shot command runs on the compiled code at once).
	interpFirst bool
	// runAfterAnswer, set by check, lets guests run on after their
	// answer (host.Config.RunAfterAnswer); not a flag.
	runAfterAnswer bool
	// egressObserver, set by serve, is told of guests' outbound HTTP
	// requests (metrics); not a flag.
	egressObserver egress.Observer
	// onCompiled, set by serve, is told of each module compilation
	// (metrics).
	onCompiled func(module string, took time.Duration, codeBytes int64)
}

func (f *engineFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cacheDir, "cache-dir", "", "compilation cache directory, private to this user (default "+host.DefaultCacheDir()+`; "-" for none)`)
	f.cacheMax = host.DefaultCacheMaxBytes
	fs.Var(&f.cacheMax, "cache-max", "bound of the compilation cache on disk; past it the oldest entries are removed at start")
	f.memory = mibSize(host.DefaultLimits().MemoryBytes)
	fs.Var(&f.memory, "memory", "default linear memory cap per instance, e.g. 64MiB (a bare number is MiB)")
	fs.DurationVar(&f.timeout, "timeout", host.DefaultLimits().Timeout, "default wall-clock deadline per call")
	f.output = mibSize(host.DefaultLimits().OutputBytes)
	fs.Var(&f.output, "max-output", "default cap on a guest's stdout+stderr per call, e.g. 16MiB (a bare number is MiB)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.Int64Var(&f.budget, "memory-budget", 0, "MiB the instances running at once hold together: each call is admitted with its table cap, globals, call stack at wazero's ceiling (about 160 MB) and initial memory plus 16 MiB, and its memory is charged as it grows (a growth past the budget fails in the guest); one module or one principal holds at most half. A call waits up to 5s for room, then fails as busy. 0: half the cgroup limit or the machine's memory; -1: no budget")
	fs.BoolVar(&f.httpProxy, "http-proxy-from-env", false, "send guests' outbound HTTP through the proxy named by HTTPS_PROXY/HTTP_PROXY/NO_PROXY (off: direct connections, guarded against private addresses)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text (key=value) or json (one object a line)")
	fs.BoolVar(&f.instrument, "instrument-loops", true, "stop guests at their deadline with loop checks inserted into each module (fast); false uses wazero's per-iteration checks (WithCloseOnContextDone)")
	f.codeMemory = host.DefaultCodeMemory
	fs.Var(&f.codeMemory, "code-memory", "budget for compiled code (e.g. 512MiB): past it, the least recently called modules' code is closed and compiled again from the cache on their next call")
	fs.IntVar(&f.compilations, "compilations", host.DefaultCompilations(), "modules compiled at once")
	fs.DurationVar(&f.describe, "describe-timeout", host.DefaultDescribeTimeout, "deadline of a module's describe run at load")
	fs.DurationVar(&f.snapTimeout, "snapshot-timeout", host.DefaultSnapshotTimeout, "deadline of a reactor's start-up run for its snapshot (past it, the module runs without a snapshot)")
	fs.UintVar(&f.maxFunctions, "max-functions", uint(host.DefaultLimits().Structure.Functions), "default cap on a module's functions, checked at load before compiling (policy max_functions overrides it)")
	f.maxCode = byteSize(host.DefaultLimits().Structure.CodeBytes)
	fs.Var(&f.maxCode, "max-code", "default cap on a module's code section, e.g. 64MiB, checked at load before compiling (policy max_code overrides it)")
}

// structure is the server's default host.Structure from the flags.
func (f *engineFlags) structure() (host.Structure, error) {
	switch {
	case f.maxFunctions == 0 || f.maxFunctions > 1_000_000:
		return host.Structure{}, fmt.Errorf("--max-functions %d: want between 1 and 1000000", f.maxFunctions)
	case f.maxCode <= 0 || f.maxCode > 1<<30:
		return host.Structure{}, fmt.Errorf("--max-code %s: want between 1B and 1GiB", host.FormatBytes(int64(f.maxCode)))
	}
	return host.Structure{Functions: uint32(f.maxFunctions), CodeBytes: uint32(f.maxCode)}, nil
}

func (f *engineFlags) engine(stderr io.Writer) (*host.Engine, error) {
	log, err := newLogger(stderr, f.logLevel, f.logFormat)
	if err != nil {
		return nil, err
	}
	st, err := f.structure()
	if err != nil {
		return nil, err
	}
	return host.NewEngine(host.Config{
		CacheDir:         f.cacheDir,
		CacheMaxBytes:    int64(f.cacheMax),
		Limits:           host.Limits{MemoryBytes: uint64(f.memory), Timeout: f.timeout, OutputBytes: int64(f.output), Structure: st},
		Logger:           log,
		InstrumentLoops:  f.instrument,
		MemoryBudget:     budgetBytes(f.budget),
		Principal:        principalName,
		Egress:           egress.Options{ProxyFromEnv: f.httpProxy, Observer: f.egressObserver},
		OnCompiled:       f.onCompiled,
		CodeMemory:       int64(f.codeMemory),
		Compilations:     f.compilations,
		DescribeTimeout:  f.describe,
		SnapshotTimeout:  f.snapTimeout,
		RunAfterAnswer:   f.runAfterAnswer,
		InterpreterFirst: f.interpFirst,
	})
}

// principalName names the authenticated principal of a call (package
// auth keeps it in the request's context) for the memory budget's
// per-principal shares.
func principalName(ctx context.Context) string {
	if p := auth.FromContext(ctx); p != nil {
		return p.Name
	}
	return ""
}

// budgetBytes turns --memory-budget (MiB, 0 default, negative none) into
// host.Config.MemoryBudget.
func budgetBytes(mib int64) int64 {
	switch {
	case mib < 0:
		return host.NoMemoryBudget
	case mib > 1<<40:
		mib = 1 << 40
	}
	return mib << 20
}

// loadModule loads one module file (with the policy beside it) as serve
// would, on an engine of its own; close the engine when done with the
// module. Logs go to logw.
func (f *engineFlags) loadModule(ctx context.Context, path string, logw io.Writer) (*host.Engine, *host.Module, error) {
	engine, err := f.engine(logw)
	if err != nil {
		return nil, nil, err
	}
	m, err := registry.LoadFile(ctx, engine, path)
	if err != nil {
		engine.Close(context.Background())
		return nil, nil, err
	}
	return engine, m, nil
}

func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var ef engineFlags
	ef.register(fs)
	fs.BoolVar(&ef.interpFirst, "interpreter-first", true, "serve a module whose compiled code is not in the cache from wazero's interpreter (describe and first calls; a call there costs 5-20x the compiled one) while the compiler builds it in the background; false: wait for the compiler (seconds for a Go module)")
	tools := fs.String("tools", "", "directory of .wasm tool modules (required)")
	skillsDir := fs.String("skills", "", "directory of Agent Skills to serve (each subdirectory holding a SKILL.md), reloaded like the tools with --watch")
	useStdio := fs.Bool("stdio", false, "serve MCP on stdin/stdout (the default when --http is not given)")
	httpAddr := fs.String("http", "", "serve Streamable HTTP on this address, endpoint /mcp (e.g. 127.0.0.1:8080)")
	workers := fs.Int("workers", 16, "requests of one module served at once on stdio (each module is admitted apart)")
	maxBatch := fs.Int("max-batch", mcphttp.DefaultMaxBatch, "messages in one JSON-RPC batch (2025-03-26 and earlier); larger batches get -32600")
	name := fs.String("name", "wasmcp", "server name reported to clients")
	watch := fs.Bool("watch", true, "reload modules when files in the tools directory change")
	instructions := fs.String("instructions", "", "instructions reported to clients")
	readyWait := fs.Duration("ready-wait", 0, "longest a list request waits for the initial load (0: until every module is loaded or refused); it then lists the modules loaded by then, and the others are added as they finish (clients are told the list changed). Serving starts at once: initialize waits for the load at most 2s (or --ready-wait if shorter) and a call waits only for its own module")
	gcHeadroom := zeroOrSize(8 << 20)
	fs.Var(&gcHeadroom, "gc-headroom", "least room the Go heap is given to grow past its live size between garbage collections while the live heap is small (internal/heapfloor; 0: Go's own pacing). Ignored when GOGC is set in the environment")
	stateKeyFile := fs.String("state-key-file", "", "file holding the key (at least 32 bytes) that seals the requestState of 2026-07-28 input_required results; replicas must share it (default: a random key per process)")
	var hf httpFlags
	hf.register(fs)
	var tf taskFlags
	tf.register(fs)
	var af authFlags
	af.register(fs)
	var of opsFlags
	of.register(fs)
	var cf configFlags
	cf.register(fs)
	var pf pullFlags
	pf.register(fs)
	fs.DurationVar(&pf.interval, "pull-interval", 0, "with a "+pull.LockName+" in the tools directory: pull its tools again this often, following their tags (0: only at start and on SIGHUP); see docs/registry-tools.md")
	if err := parseFlags(fs, args, stdout, stderr, `Usage: wasmcp serve --tools DIR [--stdio | --http ADDR] [flags]

Serves every .wasm module in DIR as MCP tools, resources and prompts. Each
call runs in a fresh WebAssembly instance under the module's limits. Logs go
to stderr. Before serving HTTP beyond loopback, read docs/network.md
("Running on a network"): every --max-* and timeout flag below caps what one client
can hold.

Flags:
`); err != nil {
		return err
	}
	cfg, err := cf.resolve(fs, os.LookupEnv)
	if err != nil {
		return err
	}
	if cf.print {
		return cfg.write(stdout)
	}
	if *maxBatch <= 0 {
		return fmt.Errorf("--max-batch %d: want a positive number", *maxBatch)
	}
	if *tools == "" || fs.NArg() > 0 {
		if *tools == "" {
			fmt.Fprint(stderr, "wasmcp serve: --tools is required\n\n")
		} else {
			fmt.Fprintf(stderr, "wasmcp serve: unexpected argument %q\n\n", fs.Arg(0))
		}
		fs.Usage()
		return errUsage
	}
	if err := checkDir("--tools", *tools); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *httpAddr == "" {
		for _, name := range []string{"http-mode", "legacy-sse"} {
			if set[name] {
				return fmt.Errorf("--%s needs --http ADDR", name)
			}
		}
	}
	if *skillsDir != "" {
		if err := checkDir("--skills", *skillsDir); err != nil {
			return err
		}
	}
	stateKey, err := readStateKey(*stateKeyFile)
	if err != nil {
		return err
	}
	if !heapfloor.FromEnvironment() {
		defer heapfloor.Start(uint64(gcHeadroom)).Stop()
	}
	metrics := telemetry.NewMetrics()
	outbound := &outboundObserver{metrics: metrics}
	ef.egressObserver = outbound
	ef.onCompiled = metrics.ModuleCompiled
	af.observer = metrics
	engine, err := ef.engine(stderr)
	if err != nil {
		return err
	}
	defer engine.Close(context.Background())
	metrics.WatchCodeMemory(engine.CodeMemory)
	log := engine.Logger()
	if len(cfg.envUsed) > 0 {
		log.Info("settings from the environment", "vars", cfg.envUsed)
	}
	ops, err := of.newOps(ctx, log, metrics)
	if err != nil {
		return err
	}
	if ops.tracing != nil {
		outbound.tracing.Store(ops.tracing)
	}
	taskMgr, err := tf.manager(ctx, *tools, log)
	if err != nil {
		return err
	}
	ops.health.StoreOpen(true)
	// Ends the guests of running tasks (marked failed) before the engine
	// closes.
	defer taskMgr.Close(context.Background(), 5*time.Second)
	if stateKey == nil && tf.redis != nil {
		// Replicas sharing a store share the sealing key too.
		if stateKey, err = tf.redis.SharedKey(ctx, "state-key", minStateKey); err != nil {
			return fmt.Errorf("--store: the shared state key (or give --state-key-file): %w", err)
		}
	}
	var fanout *redisFanout
	var fo protocol.Fanout
	if tf.redis != nil {
		af.shared = tf.redis.Limiter() // the per-principal caps count across replicas
		fanout = newRedisFanout(tf.redis, log)
		fo = fanout
	}
	// The audit trail (one line a guest call) is written in batches: a
	// call appends its line to a buffer instead of taking the log's lock
	// and making a write system call (internal/logbatch).
	auditOut := logbatch.New(stderr, 0, 0)
	defer auditOut.Close()
	auditLog, err := newLogger(auditOut, ef.logLevel, ef.logFormat)
	if err != nil {
		return err
	}
	srv := protocol.NewServer(protocol.Options{Name: *name, Version: buildVersion(), Instructions: *instructions, Logger: log,
		StateKey: stateKey, Tasks: taskMgr, TaskInline: tf.inline(), Fanout: fo,
		Access: moduleAccess, StepUp: moduleStepUp, GuestMeta: guestPrincipal, Audit: af.audit(auditLog), Observer: ops.metrics, Tracer: ops.tracer()})
	ops.metrics.WatchServer(srv)
	if fanout != nil {
		fctx, stop := context.WithCancel(ctx)
		defer stop()
		go fanout.deliver(fctx, srv)
	}
	// The tools a lock file pins (docs/registry-tools.md) are fetched,
	// verified and installed into the tools directory before the first
	// load, from the cache when they are there.
	pt, err := newPulledTools(*tools, &pf, &ef, log)
	if err != nil {
		return err
	}
	defer pt.close()
	reg := registry.New(*tools, engine, srv, log)
	reg.SetObserver(ops.metrics)
	if *skillsDir != "" {
		reg.ServeSkills(*skillsDir)
	}
	// Hot reload: --watch follows the directory, SIGHUP reloads it once.
	// Started before the initial load so that an early SIGHUP cannot end
	// the process; the registry serializes loads.
	stopFollowing := followTools(ctx, reg, *tools, *watch, pt, pf.interval, log)
	defer stopFollowing()
	if *httpAddr != "" && *useStdio {
		return errors.New("--stdio and --http are exclusive")
	}
	// A --metrics-addr listener answers /readyz (not ready) during the load.
	defer ops.close()
	if err := ops.listen(&of, *httpAddr, af.provider != "none" && af.provider != ""); err != nil {
		return err
	}
	// The summary line is logged once the listener serves and the initial
	// load has ended (its counts are the loaded catalog's).
	summary := &startSummary{log: func(listeners []string, who string) { ops.summary(srv, listeners, &ef, &tf, who) }}
	// HTTP binds before the modules load: a port in use is reported at
	// once, not after every module has compiled.
	var httpLn net.Listener
	var httpOpts mcphttp.Options
	if *httpAddr != "" {
		if httpLn, httpOpts, err = listenHTTP(*httpAddr, &hf, &af, *maxBatch, log, ops.httpOptions(&of, func(url string) {
			summary.listening(append([]string{url}, ops.listenerURLs()...), af.provider)
		})); err != nil {
			return err
		}
		defer httpLn.Close()
	}
	// Serving starts at once and the initial load runs beside it: modules
	// whose description is cached are listed without compiling, the others
	// compile concurrently. Until the load ends, initialize and ping are
	// answered at once, a call waits only for its own module, and a list
	// waits for the load (at most --ready-wait); /readyz answers 503 (see
	// protocol.Server.StartLoading). A signal ends the process at once, even
	// mid-compile. A load that cannot read the directory ends serving.
	start := time.Now()
	serveCtx, stopServing := context.WithCancelCause(ctx)
	defer stopServing(nil)
	loadDone := srv.StartLoading(*readyWait)
	defer loadDone()
	var loadErr error
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		pt.sync(ctx, false)
		err := reg.Load(ctx)
		if ctx.Err() != nil {
			srv.InterruptLoading() // calls waiting for a module hear of the shutdown
		}
		loadDone()
		if err != nil {
			loadErr = err
			stopServing(err)
			return
		}
		if ctx.Err() == nil {
			log.Info("modules loaded", "took", time.Since(start).Round(time.Millisecond))
			ops.health.CatalogLoaded()
			summary.loaded()
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
	if httpLn != nil {
		return failed(serveHTTP(serveCtx, srv, httpLn, httpOpts, log))
	}
	ops.health.Listening(true) // stdin is open
	summary.listening(append([]string{"stdio"}, ops.listenerURLs()...), "local user (stdio)")
	log.Info("serving MCP on stdio", "tools", *tools)
	err = stdio.Serve(serveCtx, srv, stdin, stdout, stdio.Options{Workers: *workers, MaxBatch: *maxBatch, MaxMessage: int(hf.maxBody), Logger: log, Principal: auth.LocalUser().Name})
	if err == nil {
		// stdin ended: the process ends once the initial load has (as it
		// did when serving began after the load), so that `wasmcp serve`
		// with stdin at EOF still fills the caches; a signal ends it at
		// once.
		select {
		case <-loaded:
		case <-ctx.Done():
		}
	}
	return failed(err)
}

// checkDir checks a directory flag: it must exist and be a directory.
func checkDir(flagName, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %s: does not exist", flagName, dir)
	case err != nil:
		return fmt.Errorf("%s %s: %w", flagName, dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s %s: not a directory", flagName, dir)
	}
	return nil
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

// zeroOrSize is a byte size flag that also takes 0 (off).
type zeroOrSize byteSize

func (z *zeroOrSize) String() string {
	if *z == 0 {
		return "0"
	}
	return (*byteSize)(z).String()
}

func (z *zeroOrSize) Set(s string) error {
	if strings.TrimSpace(s) == "0" {
		*z = 0
		return nil
	}
	return (*byteSize)(z).Set(s)
}
