package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Config configures an Engine.
type Config struct {
	// CacheDir holds wazero's compilation cache and cached module
	// descriptions, so a restart does not recompile. Empty means
	// DefaultCacheDir(); "-" turns the on-disk cache off.
	CacheDir string
	// Limits are the server-wide defaults; a module's policy may override
	// them field by field.
	Limits Limits
	// Logger receives load events and the guests' stderr. Nil means
	// slog.Default().
	Logger *slog.Logger
	// InstrumentLoops stops guests at their deadline with loop checks the
	// host inserts into each module (interrupt.go) instead of wazero's
	// WithCloseOnContextDone, which calls into Go at every loop iteration:
	// a C guest's call is about 3x cheaper. A module the rewriter does not
	// understand falls back to WithCloseOnContextDone. wasmcp serve turns
	// it on (--instrument-loops); the zero Config leaves it off.
	InstrumentLoops bool
}

// DefaultCacheDir is the compilation cache under the user's cache directory.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "wasmcp")
}

// Engine owns the wazero runtimes and the compilation cache. It is safe for
// concurrent use. Modules loaded by an Engine are valid until it is closed.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	cache wazero.CompilationCache
	descs *descCache

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
	e := &Engine{cfg: cfg, log: cfg.Logger, runtimes: map[runtimeKey]wazero.Runtime{}}
	switch cfg.CacheDir {
	case "-":
		e.cache = wazero.NewCompilationCache()
	default:
		dir := cfg.CacheDir
		if dir == "" {
			dir = DefaultCacheDir()
		}
		c, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "wazero"))
		if err != nil {
			return nil, fmt.Errorf("host: compilation cache in %s: %w", dir, err)
		}
		e.cache = c
		e.descs = &descCache{dir: filepath.Join(dir, "describe")}
	}
	return e, nil
}

// Limits returns the engine's default limits.
func (e *Engine) Limits() Limits { return e.cfg.Limits }

// Logger returns the engine's logger.
func (e *Engine) Logger() *slog.Logger { return e.log }

// runtimeKey names a runtime: a memory cap and whether instances are
// closed when their context ends (WithCloseOnContextDone, used only for
// modules that could not be instrumented, see interrupt.go).
type runtimeKey struct {
	pages       uint32
	closeOnDone bool
}

// runtime returns the runtime for a memory cap, creating it on first use.
// Runtimes share one compilation cache, so a module compiled for one cap is
// not compiled again for another.
func (e *Engine) runtime(ctx context.Context, pages uint32, closeOnDone bool) (wazero.Runtime, error) {
	key := runtimeKey{pages, closeOnDone}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("host: engine closed")
	}
	if r, ok := e.runtimes[key]; ok {
		return r, nil
	}
	rc := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(e.cache).
		WithMemoryLimitPages(pages).
		WithCloseOnContextDone(closeOnDone).
		WithCustomSections(true)
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("host: instantiate WASI: %w", err)
	}
	e.runtimes[key] = r
	return r, nil
}

// Close closes every runtime, ending every running instance.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, r := range e.runtimes {
		errs = append(errs, r.Close(ctx))
	}
	errs = append(errs, e.cache.Close(ctx))
	return errors.Join(errs...)
}
