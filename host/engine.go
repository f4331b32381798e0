package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/privdir"
	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// Config configures an Engine.
type Config struct {
	// CacheDir holds wazero's compilation cache and cached module
	// descriptions, so a restart does not recompile. Empty means
	// DefaultCacheDir(); "-" turns the on-disk cache off. The directory
	// must be this user's and not writable by group or others (else an
	// explicit one is an error and the default one is replaced by an
	// in-memory cache, with a warning); files in it that are not private
	// to this user are removed before use.
	CacheDir string
	// CacheMaxBytes bounds the on-disk cache: when it holds more at start,
	// its oldest files are removed. 0 means DefaultCacheMaxBytes; a
	// negative value leaves it unbounded.
	CacheMaxBytes int64
	// Limits are the server-wide defaults; a module's policy may override
	// them field by field.
	Limits Limits
	// Logger receives load events and the guests' stderr. Nil means
	// slog.Default().
	Logger *slog.Logger
	// InstrumentLoops stops guests at their deadline with loop checks the
	// host inserts into each module (package internal/wasmrewrite) instead of wazero's
	// WithCloseOnContextDone, which calls into Go at every loop iteration:
	// a C guest's call is about 3x cheaper. A module the rewriter does not
	// understand falls back to WithCloseOnContextDone. wasmcp serve turns
	// it on (--instrument-loops); the zero Config leaves it off.
	InstrumentLoops bool
	// MemoryBudget bounds, in bytes, what the instances running at once
	// may use together (each counts its memory cap and its tables at
	// their cap): a call is admitted only while its instance fits, waits
	// at most BudgetWait for room, then fails with a "busy" limit error.
	// Zero means DefaultMemoryBudget(); NoMemoryBudget admits every call.
	MemoryBudget int64
	// BudgetWait is how long a call waits for room in the memory budget;
	// zero means DefaultBudgetWait.
	BudgetWait time.Duration
	// Principal names the caller of a call from its context, for the
	// memory budget's per-principal shares ("" when none: the call then
	// counts against its module's share only). nil means no call has a
	// principal. wasmcp serve names the authenticated principal (package
	// auth), which the host knows nothing of.
	Principal func(ctx context.Context) string
	// OnCompiled, if set, is told of each compilation of a module's code
	// (its first call's, or again after --code-memory closed it): how
	// long it took and the code's measured size.
	OnCompiled func(module string, took time.Duration, codeBytes int64)
	// Egress configures guests' outbound HTTP (proxy, resolver, dialer);
	// what each module may reach is its policy's HTTP.
	Egress egress.Options
	// CodeMemory bounds, in bytes, the compiled code the engine keeps for
	// modules opened with Open: past it, the code of the least recently
	// called modules is closed (never while a call runs on it) and
	// compiled again on their next call. Zero means DefaultCodeMemory;
	// NoCodeBudget keeps all code.
	CodeMemory int64
	// Compilations bounds the compilations running at once; zero means
	// DefaultCompilations().
	Compilations int
	// DescribeTimeout is the deadline of a module's describe or discovery
	// run at load, when shorter than its call timeout; zero means
	// DefaultDescribeTimeout. It counts the guest's own time (CPU and
	// sleeps), not time spent waiting for a CPU (guesttime.go).
	DescribeTimeout time.Duration
	// SnapshotTimeout is the deadline of a reactor's start-up run for its
	// snapshot, in the guest's own time as DescribeTimeout; zero means
	// DefaultSnapshotTimeout. A start-up that reaches it runs as a plain
	// reactor, without a snapshot.
	SnapshotTimeout time.Duration
	// LoadCeiling is the wall-clock ceiling of a run at load (describe,
	// discovery, snapshot start-up): a run still going then, its guest
	// under its own deadline, is cut and the load tried again later
	// (Transient). Zero means 12 times the run's deadline, at least a
	// minute.
	LoadCeiling time.Duration
	// RunAfterAnswer lets a guest run on after its answer, until its
	// entry point returns or its deadline passes, so that what it writes
	// after answering is seen (contract.CallStats.AfterAnswer): wasmcp
	// check sets it. Otherwise the instance is stopped as soon as it
	// answers, since anything more it does only burns CPU.
	RunAfterAnswer bool
	// SlowCompile is how long a compilation runs before it is logged (and
	// then logged again every SlowCompile); zero means
	// DefaultSlowCompile.
	SlowCompile time.Duration
	// InterpreterFirst builds a module whose compiled code is not known
	// to be in the compilation cache for wazero's interpreter first: it is
	// described and serves its first calls from there while the
	// optimizing compiler builds its compiled code in the background, and
	// each new call runs on the compiled code once it is ready (tier.go).
	// wasmcp serve turns it on (--interpreter-first); the zero Config
	// leaves it off.
	InterpreterFirst bool
}

// DefaultCacheMaxBytes is the default bound of the on-disk cache (a Go
// guest compiles to about 32 MB of native code).
const DefaultCacheMaxBytes = 1 << 30

// DefaultCacheDir is the compilation cache under the user's cache
// directory; a user without one (no HOME) gets a directory of their own
// under the temporary directory, never a path shared by every user.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return privdir.Fallback("wasmcp")
	}
	return filepath.Join(dir, "wasmcp")
}

// Engine owns the wazero runtimes and the compilation cache. It is safe for
// concurrent use. Modules loaded by an Engine are valid until it is closed.
type Engine struct {
	cfg          Config
	loadCeil     atomic.Int64  // Config.LoadCeiling, in nanoseconds (tests change it)
	snapRetry    time.Duration // the first wait before a cut start-up is taken again
	log          *slog.Logger
	cache        wazero.CompilationCache
	descs        *descCache
	snaps        *snapCache
	guard        *codeGuard // seals the compiled code on disk (cacheseal.go); nil without one
	dir          string     // the on-disk cache, "" for none
	mem          *memBudget
	idle         idleReturn // returns memory to the OS when calls stop (idle.go)
	code         *codeBudget
	pool         compilePool  // compilations
	starts       *startLanes  // snapshot start-up runs, apart so that a slow start-up holds no compilation slot (startlanes.go)
	built        atomic.Int64 // compilations done (Engine.build)
	compiles     atomic.Int64 // wazero CompileModule calls for guests (Engine.compile)
	active       atomic.Int64 // compilations running
	ipool        compilePool  // the interpreter tier's compilations (tier.go), apart so that they never wait behind the compiler's
	upgrades     atomic.Int64 // interpreted modules whose compiled tier took over
	bgPool       compilePool  // the compiler tier's background builds (tier.go): half the pool, at least one
	interpBuilds busyCount    // the interpreter tier's builds under way; the compiler's background builds wait for none (tier.go)
	// islots bounds the interpreted calls of modules whose compiled tier
	// is being built (interpSlots), so that they cannot starve that
	// build of the CPU (codeSlot.acquire, tier.go).
	islots        chan struct{}
	interpWaiting atomic.Int64 // calls waiting for an islots slot
	retired       atomic.Int64 // interpreted codes closed after the compiled tier replaced them
	// beforeBuild, if set (tests), runs before each build of a module's
	// code for a tier, in the build's goroutine; an error fails the build.
	beforeBuild func(module string, t tier) error

	disks diskUsages // the read-write mounts' usage, by host directory (diskquota.go)

	mu       sync.Mutex
	runtimes map[runtimeKey]wazero.Runtime
	closed   bool
}

// NewEngine creates an engine. Close it to release the runtimes.
func NewEngine(cfg Config) (*Engine, error) {
	cfg.Limits = cfg.Limits.WithDefaults(DefaultLimits())
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Compilations <= 0 {
		cfg.Compilations = DefaultCompilations()
	}
	if cfg.DescribeTimeout <= 0 {
		cfg.DescribeTimeout = DefaultDescribeTimeout
	}
	if cfg.SnapshotTimeout <= 0 {
		cfg.SnapshotTimeout = defaultSnapshotTimeout
	}
	if cfg.SlowCompile <= 0 {
		cfg.SlowCompile = DefaultSlowCompile
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, runtimes: map[runtimeKey]wazero.Runtime{},
		mem:  newMemBudget(cfg.MemoryBudget, cfg.BudgetWait),
		code: newCodeBudget(cfg.CodeMemory, cfg.Logger.Debug), pool: make(compilePool, cfg.Compilations),
		starts: newStartLanes(cfg.Compilations), ipool: make(compilePool, cfg.Compilations),
		bgPool: make(compilePool, max(1, cfg.Compilations/2))}
	e.islots = make(chan struct{}, interpSlots(cap(e.bgPool)))
	e.code.waitLog = cfg.Logger.Info
	e.loadCeil.Store(int64(cfg.LoadCeiling))
	e.snapRetry = snapshotRetryFirst
	switch cfg.CacheDir {
	case "-":
		e.cache = wazero.NewCompilationCache()
	default:
		dir := cfg.CacheDir
		if dir == "" {
			dir = DefaultCacheDir()
		}
		if err := e.prepareCache(dir); err != nil {
			if cfg.CacheDir != "" {
				return nil, fmt.Errorf("host: compilation cache: %w", err)
			}
			e.log.Warn("compilation cache kept in memory: its directory is refused", "err", err)
			e.cache = wazero.NewCompilationCache()
			return e, nil
		}
		c, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "wazero"))
		if err != nil {
			return nil, fmt.Errorf("host: compilation cache in %s: %w", dir, err)
		}
		e.cache = c
		e.dir = dir
		e.guard = &codeGuard{dir: filepath.Join(dir, "wazero"), warn: &cacheWarner{log: e.log}}
		e.descs = &descCache{dir: filepath.Join(dir, "describe"), warn: &cacheWarner{log: e.log}}
		e.snaps = &snapCache{dir: filepath.Join(dir, "snapshot"), warn: &cacheWarner{log: e.log}}
	}
	return e, nil
}

// prepareCache makes sure the cache directory is private to this user,
// removes what in the engine's part of it (wazero/, describe/, snapshot/; other tools
// may keep files beside them) is not, and prunes the compiled code to its
// bound.
func (e *Engine) prepareCache(dir string) error {
	if err := privdir.Ensure(dir); err != nil {
		return err
	}
	max := e.cfg.CacheMaxBytes
	if max == 0 {
		max = DefaultCacheMaxBytes
	}
	freed, removed, err := privdir.Prune(filepath.Join(dir, "wazero"), max)
	if err != nil {
		return fmt.Errorf("pruning %s: %w", dir, err)
	}
	_, foreign, err := privdir.Prune(filepath.Join(dir, "describe"), 0)
	if err != nil {
		return fmt.Errorf("pruning %s: %w", dir, err)
	}
	removed += foreign
	_, foreign, err = privdir.Prune(filepath.Join(dir, "tier"), 0)
	if err != nil {
		return fmt.Errorf("pruning %s: %w", dir, err)
	}
	removed += foreign
	sfreed, sremoved, err := privdir.Prune(filepath.Join(dir, "snapshot"), max)
	if err != nil {
		return fmt.Errorf("pruning %s: %w", dir, err)
	}
	freed, removed = freed+sfreed, removed+sremoved
	if removed > 0 {
		e.log.Info("compilation cache pruned", "dir", dir, "files_removed", removed, "bytes_freed", freed, "max_bytes", max)
	}
	return nil
}

// Limits returns the engine's default limits.
func (e *Engine) Limits() Limits { return e.cfg.Limits }

// MemoryBudget returns the engine's memory budget in bytes, or
// NoMemoryBudget.
func (e *Engine) MemoryBudget() int64 {
	if e.mem == nil {
		return NoMemoryBudget
	}
	return e.mem.total
}

// Logger returns the engine's logger.
func (e *Engine) Logger() *slog.Logger { return e.log }

// runtimeKey names a runtime: a memory cap, whether instances are
// closed when their context ends (WithCloseOnContextDone, used only for
// modules that could not be instrumented, see compile) and whether it is
// wazero's interpreter (tier.go) rather than its compiler, and whether
// its modules have a read-write mount (their WASI functions that a write
// budget can refuse are watched, noSpaceListener: a listener costs every
// call of the function a walk of the guest's stack, which the others
// need not pay).
type runtimeKey struct {
	pages       uint32
	closeOnDone bool
	interp      bool
	writable    bool
}

// runtime returns the runtime for a memory cap, creating it on first use.
// Runtimes share one compilation cache, so a module compiled for one cap is
// not compiled again for another.
func (e *Engine) runtime(ctx context.Context, pages uint32, writable, closeOnDone, interp bool) (wazero.Runtime, error) {
	key := runtimeKey{pages, closeOnDone, interp, writable}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("host: engine closed")
	}
	if r, ok := e.runtimes[key]; ok {
		return r, nil
	}
	rc := wazero.NewRuntimeConfigCompiler().WithCompilationCache(e.cache)
	if interp {
		// The interpreter keeps nothing in a compilation cache.
		rc = wazero.NewRuntimeConfigInterpreter()
	}
	rc = rc.WithMemoryLimitPages(pages).
		WithCloseOnContextDone(closeOnDone).
		WithCustomSections(true)
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	// fd_fdstat_get is watched for the calls of MCP-server modules
	// (mcpserver.go, stdinListener), and for modules with a read-write
	// mount the functions a write budget can refuse (noSpaceListener);
	// the others run as they are.
	listeners := stdinListeners
	if writable {
		listeners = wasiListeners
	}
	if _, err := wasi_snapshot_preview1.Instantiate(experimental.WithFunctionListenerFactory(ctx, listeners), r); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("host: instantiate WASI: %w", err)
	}
	e.runtimes[key] = r
	return r, nil
}

// Close closes every runtime, ending every running instance. While a
// compilation runs (wazero cannot stop one) the runtimes are left open
// instead, for the process to end with them: Close does not wait.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.idle.stop()
	if n := e.active.Load(); n > 0 {
		e.log.Info("engine closed with compilations running; their runtimes are left to the process's end", "compilations", n)
		return nil
	}
	var errs []error
	for _, r := range e.runtimes {
		errs = append(errs, r.Close(ctx))
	}
	errs = append(errs, e.cache.Close(ctx))
	return errors.Join(errs...)
}

// interruptExport is the global an instrumented module exports: a call sets
// it when its context ends and the module's loops trap.
const interruptExport = wasmrewrite.InterruptExport

// startExport is an instrumented module's start function, which a call
// runs once the stop flag is armed (wasmrewrite.Instrument).
const startExport = wasmrewrite.StartExport

// start returns the start function an instrumented module's instance
// must run first (startExport), or nil.
func (c *compiled) start(mod api.Module) api.Function {
	if !c.interrupt {
		return nil
	}
	return mod.ExportedFunction(startExport)
}

// compile compiles wasm on the runtime for its memory cap that closes
// instances when their context ends. With Config.InstrumentLoops it then
// rewrites the (now validated) module (rewrite: wasmrewrite.Instrument) and
// compiles that on a runtime without WithCloseOnContextDone; when the
// module cannot be instrumented the first compilation is kept, so the
// module is still interruptible, only slower. interrupt reports whether
// the module was instrumented. A nil runtime means the engine could not
// provide one (err says why); otherwise err is the module's compile error.
//
// validated says that wazero validated these very bytes before in this
// process (the module's code compiled before and the code budget closed
// it): the compilation of the module as given, which is there only to
// validate it, is skipped and only the instrumented module is compiled
// (should that fail, the module as given is compiled first as usual). From
// the compilation cache this halves wazero's work: each CompileModule
// decodes and validates its module and reads, checksums and maps its
// machine code (BenchmarkRecompileFromCache).
//
// interp compiles for wazero's interpreter instead (tier.go), without the
// instrumentation: its deadline is wazero's context check at each loop
// back-edge (see below).
func (e *Engine) compile(ctx context.Context, name string, pages uint32, writable bool, wasm []byte, validated, interp bool) (r wazero.Runtime, code wazero.CompiledModule, interrupt bool, err error) {
	if interp {
		// Interpreted code is never instrumented: the stop flag is set
		// from the deadline's goroutine while the guest's reads it, which
		// in the interpreter is Go code, a data race (the compiler's
		// machine code reads the flag outside Go's memory model). The
		// interpreter checks its context at each loop back-edge instead
		// (WithCloseOnContextDone), a small cost beside interpretation.
		if r, err = e.runtime(ctx, pages, writable, true, true); err != nil {
			return nil, nil, false, err
		}
		e.countCompile(true)
		code, err = e.compileOn(ctx, r, wasm, true)
		return r, code, false, err
	}
	if validated && e.cfg.InstrumentLoops {
		if iw, ierr := rewrite(wasm); ierr == nil {
			ri, rerr := e.runtime(ctx, pages, writable, false, interp)
			if rerr != nil {
				return nil, nil, false, rerr
			}
			e.countCompile(interp)
			if icode, cerr := e.compileOn(ctx, ri, iw, interp); cerr == nil {
				return ri, icode, true, nil
			}
		}
	}
	if r, err = e.runtime(ctx, pages, writable, true, interp); err != nil {
		return nil, nil, false, err
	}
	e.countCompile(interp)
	// The module as it is comes first, even when it will be instrumented:
	// wazero validates it, so the rewriter only ever sees valid modules
	// and can never turn an invalid one into a valid one (say, one whose
	// code names a global that only the rewrite adds: the stop flag). With
	// the compilation cache this costs one more cache read per load.
	if code, err = e.compileOn(ctx, r, wasm, interp); err != nil || !e.cfg.InstrumentLoops {
		return r, code, false, err
	}
	iw, ierr := rewrite(wasm)
	if ierr == nil {
		ri, rerr := e.runtime(ctx, pages, writable, false, interp)
		if rerr != nil {
			_ = code.Close(ctx)
			return nil, nil, false, rerr
		}
		e.countCompile(interp)
		icode, cerr := e.compileOn(ctx, ri, iw, interp)
		if cerr == nil {
			_ = code.Close(ctx)
			return ri, icode, true, nil
		}
		ierr = cerr
	}
	e.log.Info("module not instrumented; wazero checks its deadline", "module", name, "reason", ierr)
	return r, code, false, nil
}

// rewrite is what the host compiles in place of a module wazero validated,
// with Config.InstrumentLoops: the module with its funcref tables filled by
// code rather than by element segments wazero evaluates at every
// instantiation (wasmrewrite.ElementsInCode; the module as it is when that
// refuses it), then instrumented (wasmrewrite.Instrument). Both rewrites
// ride on the one compilation of a rewritten module the instrumentation
// already costs.
func rewrite(wasm []byte) ([]byte, error) {
	if w, err := wasmrewrite.ElementsInCode(wasm, wasmrewrite.ElementsInCodeMin); err == nil {
		wasm = w
	}
	return wasmrewrite.Instrument(wasm)
}

// compileModule is r.CompileModule with the on-disk compiled code checked
// before wazero may read it and sealed after wazero wrote it (codeGuard).
func (e *Engine) compileModule(ctx context.Context, r wazero.Runtime, wasm []byte) (wazero.CompiledModule, error) {
	e.guard.before()
	defer e.guard.after()
	return guardCompile(ctx, r, wasm)
}

// guardCompile is r.CompileModule with a panic inside wazero turned into
// the module's error. wasmrewrite.Check refuses what is known to make
// wazero panic (a function naming a type the module lacks did); this
// keeps an unknown case from taking every other module's server down.
func guardCompile(ctx context.Context, r wazero.Runtime, wasm []byte) (code wazero.CompiledModule, err error) {
	defer func() {
		if p := recover(); p != nil {
			code, err = nil, fmt.Errorf("wazero failed on this module: %v", p)
		}
	}()
	return r.CompileModule(ctx, wasm)
}

// compileOn is compileModule for the compiler tier and r.CompileModule for
// the interpreter, which keeps nothing on disk for the guard to check.
func (e *Engine) compileOn(ctx context.Context, r wazero.Runtime, wasm []byte, interp bool) (wazero.CompiledModule, error) {
	if interp {
		return guardCompile(ctx, r, wasm)
	}
	return e.compileModule(ctx, r, wasm)
}

// countCompile counts a CompileModule call for the compiler (compiles);
// the interpreter's are not counted.
func (e *Engine) countCompile(interp bool) {
	if !interp {
		e.compiles.Add(1)
	}
}
