package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wasmcp/wasmcp/cmd/wasmcp/internal/flagconf"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/registry"
	"github.com/wasmcp/wasmcp/server"
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
	loadCeiling  time.Duration
	maxFunctions uint
	maxCode      byteSize
	// interpFirst is --interpreter-first, a flag of serve only (a
	// one-shot command runs on the compiled code at once).
	interpFirst bool
	// runAfterAnswer, set by check, lets guests run on after their
	// answer (host.Config.RunAfterAnswer); not a flag.
	runAfterAnswer bool
}

func (f *engineFlags) register(fs *flag.FlagSet) {
	d := server.DefaultEngine()
	fs.StringVar(&f.cacheDir, "cache-dir", d.CacheDir, "compilation cache directory, private to this user (default "+host.DefaultCacheDir()+`; "-" for none)`)
	f.cacheMax = byteSize(d.CacheMaxBytes)
	fs.Var(&f.cacheMax, "cache-max", "bound of the compilation cache on disk; past it the oldest entries are removed at start")
	f.memory = mibSize(d.Limits.MemoryBytes)
	fs.Var(&f.memory, "memory", "default linear memory cap per instance, e.g. 64MiB (a bare number is MiB)")
	fs.DurationVar(&f.timeout, "timeout", d.Limits.Timeout, "default wall-clock deadline per call")
	f.output = mibSize(d.Limits.OutputBytes)
	fs.Var(&f.output, "max-output", "default cap on a guest's stdout+stderr per call, e.g. 16MiB (a bare number is MiB)")
	fs.StringVar(&f.logLevel, "log-level", server.Defaults().LogLevel, "log level: debug, info, warn, error")
	fs.Int64Var(&f.budget, "memory-budget", 0, "MiB the instances running at once hold together: each call is admitted with its table cap, globals, call stack at wazero's ceiling (about 160 MB) and initial memory plus 16 MiB, and its memory is charged as it grows (a growth past the budget fails in the guest); one module or one principal holds at most half. A call waits up to 5s for room, then fails as busy. 0: half the cgroup limit or the machine's memory; -1: no budget")
	fs.BoolVar(&f.httpProxy, "http-proxy-from-env", false, "send guests' outbound HTTP through the proxy named by HTTPS_PROXY/HTTP_PROXY/NO_PROXY (off: direct connections, guarded against private addresses)")
	fs.StringVar(&f.logFormat, "log-format", server.Defaults().LogFormat, "log format: text (key=value) or json (one object a line)")
	fs.BoolVar(&f.instrument, "instrument-loops", d.InstrumentLoops, "stop guests at their deadline with loop checks inserted into each module (fast); false uses wazero's per-iteration checks (WithCloseOnContextDone)")
	f.codeMemory = byteSize(d.CodeMemory)
	fs.Var(&f.codeMemory, "code-memory", "budget for compiled code (e.g. 512MiB): past it, the least recently called modules' code is closed and compiled again from the cache on their next call")
	fs.IntVar(&f.compilations, "compilations", d.Compilations, "modules compiled at once")
	fs.DurationVar(&f.describe, "describe-timeout", d.DescribeTimeout, "deadline of a module's describe run at load, in the guest's own time (CPU and sleeps; waiting for a CPU does not count)")
	fs.DurationVar(&f.snapTimeout, "snapshot-timeout", d.SnapshotTimeout, "deadline of a reactor's start-up run for its snapshot, in the guest's own time (past it, the module runs without a snapshot)")
	fs.DurationVar(&f.loadCeiling, "load-ceiling", d.LoadCeiling, "wall-clock ceiling of a run at load (describe, snapshot start-up): a run cut there with its guest under its own deadline waited for a CPU, and its module is loaded again after a backoff (0: 12x the run's deadline, at least 1m)")
	fs.UintVar(&f.maxFunctions, "max-functions", uint(d.Limits.Structure.Functions), "default cap on a module's functions, checked at load before compiling (policy max_functions overrides it)")
	f.maxCode = byteSize(d.Limits.Structure.CodeBytes)
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

// hostConfig is the engine's configuration from the flags (serve's
// server.Config.Engine), without its logger.
func (f *engineFlags) hostConfig() (host.Config, error) {
	st, err := f.structure()
	if err != nil {
		return host.Config{}, err
	}
	return host.Config{
		CacheDir:         f.cacheDir,
		CacheMaxBytes:    int64(f.cacheMax),
		Limits:           host.Limits{MemoryBytes: uint64(f.memory), Timeout: f.timeout, OutputBytes: int64(f.output), Structure: st},
		InstrumentLoops:  f.instrument,
		MemoryBudget:     budgetBytes(f.budget),
		Egress:           egress.Options{ProxyFromEnv: f.httpProxy},
		CodeMemory:       int64(f.codeMemory),
		Compilations:     f.compilations,
		DescribeTimeout:  f.describe,
		SnapshotTimeout:  f.snapTimeout,
		LoadCeiling:      f.loadCeiling,
		RunAfterAnswer:   f.runAfterAnswer,
		InterpreterFirst: f.interpFirst,
	}, nil
}

// engine is an engine of the flags' configuration, logging to stderr.
func (f *engineFlags) engine(stderr io.Writer) (*host.Engine, error) {
	log, err := server.NewLogger(stderr, f.logLevel, f.logFormat)
	if err != nil {
		return nil, err
	}
	cfg, err := f.hostConfig()
	if err != nil {
		return nil, err
	}
	cfg.Logger = log
	return host.NewEngine(cfg)
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

const serveUsage = `Usage: wasmcp serve --tools DIR [--stdio | --http ADDR] [flags]

Serves every .wasm module in DIR as MCP tools, resources and prompts. Each
call runs in a fresh WebAssembly instance under the module's limits. Logs go
to stderr. Before serving HTTP beyond loopback, read docs/network.md
("Running on a network"): every --max-* and timeout flag below caps what one client
can hold.

Flags:
`

// cmdServe parses serve's flags into a server.Config and runs the server;
// SIGHUP reloads the tools directory.
func cmdServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := serveConfig(args, stdout, stderr)
	if err != nil || cfg == nil {
		return err
	}
	cfg.Stdin, cfg.Stdout, cfg.Stderr = stdin, stdout, stderr
	srv, err := server.New(*cfg)
	if err != nil {
		return err
	}
	// Caught from here on, so that a SIGHUP early in the start does not
	// end the process: the reload waits for the registry.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				srv.Logger().Info("SIGHUP: reloading the tools directory", "dir", cfg.Tools)
				_ = srv.Reload(ctx) // logged
			}
		}
	}()
	return srv.Run(ctx)
}

// serveConfig parses serve's flags, then the environment and the --config
// file, into a server.Config; nil (and no error) when --print-config
// printed it.
func serveConfig(args []string, stdout, stderr io.Writer) (*server.Config, error) {
	c := server.Defaults()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var ef engineFlags
	ef.register(fs)
	fs.BoolVar(&ef.interpFirst, "interpreter-first", c.Engine.InterpreterFirst, "serve a module whose compiled code is not in the cache from wazero's interpreter (describe and first calls; a call there costs 5-20x the compiled one) while the compiler builds it in the background; false: wait for the compiler (seconds for a Go module)")
	fs.StringVar(&c.Tools, "tools", "", "directory of .wasm tool modules (required)")
	fs.StringVar(&c.Skills, "skills", "", "directory of Agent Skills to serve (each subdirectory holding a SKILL.md), reloaded like the tools with --watch")
	fs.BoolVar(&c.Stdio, "stdio", false, "serve MCP on stdin/stdout (the default when --http is not given)")
	fs.StringVar(&c.HTTPAddr, "http", "", "serve Streamable HTTP on this address, endpoint /mcp (e.g. 127.0.0.1:8080)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "requests of one module served at once on stdio (each module is admitted apart)")
	fs.IntVar(&c.MaxBatch, "max-batch", c.MaxBatch, "messages in one JSON-RPC batch (2025-03-26 and earlier); larger batches get -32600")
	fs.StringVar(&c.Name, "name", c.Name, "server name reported to clients")
	fs.BoolVar(&c.Watch, "watch", c.Watch, "reload modules when files in the tools directory change")
	fs.StringVar(&c.Instructions, "instructions", "", "instructions reported to clients")
	fs.DurationVar(&c.ReadyWait, "ready-wait", c.ReadyWait, "longest a list request waits for the initial load (0: until every module is loaded or refused); it then lists the modules loaded by then, and the others are added as they finish (clients are told the list changed). Serving starts at once: initialize waits for the load at most 2s (or --ready-wait if shorter) and a call waits only for its own module")
	gcHeadroom := zeroOrSize(c.GCHeadroom)
	fs.Var(&gcHeadroom, "gc-headroom", "least room the Go heap is given to grow past its live size between garbage collections while the live heap is small (internal/heapfloor; 0: Go's own pacing). Ignored when GOGC is set in the environment")
	fs.StringVar(&c.StateKeyFile, "state-key-file", "", "file holding the key (at least 32 bytes) that seals the requestState of 2026-07-28 input_required results; replicas must share it (default: a random key per process)")
	registerHTTP(fs, &c.HTTP)
	registerTasks(fs, &c.Tasks)
	registerAuth(fs, &c.Auth)
	registerOps(fs, &c.Ops)
	var cf flagconf.Flags
	cf.Register(fs)
	var of ociFlags
	of.register(fs)
	fs.DurationVar(&c.Pull.Interval, "pull-interval", 0, "with a "+pull.LockName+" in the tools directory: pull its tools again this often, following their tags (0: only at start and on SIGHUP); see docs/registry-tools.md")
	if err := parseFlags(fs, args, stdout, stderr, serveUsage); err != nil {
		return nil, err
	}
	resolved, err := cf.Resolve(fs, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if cf.Print {
		return nil, resolved.Write(stdout)
	}
	if err := checkServeArgs(fs, &c, stderr); err != nil {
		return nil, err
	}
	if c.Engine, err = ef.hostConfig(); err != nil {
		return nil, err
	}
	c.LogLevel, c.LogFormat, c.EnvUsed, c.Version = ef.logLevel, ef.logFormat, resolved.EnvUsed, buildVersion()
	c.GCHeadroom = uint64(gcHeadroom)
	c.Pull.OCI = oci.Options{Insecure: of.insecure, Timeout: of.timeout, DockerConfig: of.dockerConfig, MaxModule: int64(of.maxModule)}
	return &c, nil
}

// checkServeArgs refuses a serve command line without --tools, with
// arguments, naming a directory that is not one, or with HTTP flags but
// no --http.
func checkServeArgs(fs *flag.FlagSet, c *server.Config, stderr io.Writer) error {
	if c.Tools == "" || fs.NArg() > 0 {
		if c.Tools == "" {
			fmt.Fprint(stderr, "wasmcp serve: --tools is required\n\n")
		} else {
			fmt.Fprintf(stderr, "wasmcp serve: unexpected argument %q\n\n", fs.Arg(0))
		}
		fs.Usage()
		return errUsage
	}
	if err := checkDir("--tools", c.Tools); err != nil {
		return err
	}
	if c.Skills != "" {
		if err := checkDir("--skills", c.Skills); err != nil {
			return err
		}
	}
	if c.HTTPAddr == "" {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, name := range []string{"http-mode", "legacy-sse"} {
			if set[name] {
				return fmt.Errorf("--%s needs --http ADDR", name)
			}
		}
	}
	return nil
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
