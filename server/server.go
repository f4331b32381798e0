package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/internal/heapfloor"
	"github.com/wasmcp/wasmcp/registry"
	"github.com/wasmcp/wasmcp/telemetry"
)

// Server is one `wasmcp serve`: New checks its Config, Run serves it.
type Server struct {
	cfg      Config
	log      *slog.Logger
	stateKey []byte

	// ready is closed once Run has made the registry (reg, pull set);
	// stopped when Run returns.
	ready, stopped chan struct{}
	reg            *registry.Registry
	pull           *pulledTools

	// mu guards closing; reloads are the Reload calls in flight, which
	// Run waits for before it closes the engine. runCtx ends when Run
	// stops following the tools directory.
	mu      sync.Mutex
	closing bool
	reloads sync.WaitGroup
	runCtx  context.Context
}

// New checks cfg and makes the server's logger (to cfg.Stderr); nothing
// is opened or bound until Run.
func New(cfg Config) (*Server, error) {
	if cfg.Stdin == nil {
		cfg.Stdin = strings.NewReader("")
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.MaxBatch <= 0 {
		return nil, fmt.Errorf("--max-batch %d: want a positive number", cfg.MaxBatch)
	}
	if cfg.Tools == "" {
		return nil, errors.New("--tools is required")
	}
	stateKey, err := readStateKey(cfg.StateKeyFile)
	if err != nil {
		return nil, err
	}
	if cfg.HTTPAddr != "" && cfg.Stdio {
		return nil, errors.New("--stdio and --http are exclusive")
	}
	log, err := NewLogger(cfg.Stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, log: log, stateKey: stateKey, ready: make(chan struct{}), stopped: make(chan struct{})}, nil
}

// Logger is the server's log.
func (s *Server) Logger() *slog.Logger { return s.log }

// NewLogger writes logs to w at the given level, in format "text" (or "")
// or "json". A record logged with a traced call's context names its trace.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text", "":
		return slog.New(telemetry.LogHandler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(telemetry.LogHandler(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// Run serves until ctx ends (the shutdown is graceful: see
// HTTPConfig.ShutdownGrace), stdin ends (stdio), or the initial load
// cannot read the tools directory. Call it once. The end of ctx is a
// clean shutdown, not an error: Run then returns nil.
func (s *Server) Run(ctx context.Context) error {
	err := s.run(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func (s *Server) run(ctx context.Context) error {
	defer close(s.stopped)
	var c cleanups
	defer func() { c.run() }() // the steps below add to c
	if !heapfloor.FromEnvironment() {
		c.add(heapfloor.Start(s.cfg.GCHeadroom).Stop)
	}
	r := &run{s: s, cfg: &s.cfg, log: s.log, auth: s.cfg.Auth}
	for _, step := range []func(context.Context, *run, *cleanups) error{
		startEngine, startOps, startTasks, startProtocol, startRegistry, s.follow, startListeners,
	} {
		if err := step(ctx, r, &c); err != nil {
			return err
		}
	}
	return r.serve(ctx, &c)
}

// cleanups are the closing steps of Run, run last first.
type cleanups []func()

func (c *cleanups) add(f func()) { *c = append(*c, f) }

func (c cleanups) run() {
	for i := len(c) - 1; i >= 0; i-- {
		c[i]()
	}
}

// follow starts following the tools directory (the watchers and the pull
// interval) and opens Reload: before the initial load, so that an early
// reload waits for nothing but the registry.
func (s *Server) follow(ctx context.Context, r *run, c *cleanups) error {
	ctx, cancel := context.WithCancel(ctx)
	s.runCtx = ctx
	stop := follow(ctx, r.reg, s.cfg.Tools, s.cfg.Watch, r.pull, s.cfg.Pull.Interval, s.log)
	s.reg, s.pull = r.reg, r.pull
	close(s.ready)
	c.add(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		cancel()
		stop()
		s.reloads.Wait()
	})
	return nil
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
