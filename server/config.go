package server

import (
	"io"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/tasks"
	"github.com/wasmcp/wasmcp/telemetry"
	"github.com/wasmcp/wasmcp/transport/mcphttp"
)

// Config is a server's whole configuration: one field per `wasmcp serve`
// setting (the flag of the same name; errors name the flag), with the
// defaults of Defaults. Start from Defaults and change what differs.
type Config struct {
	// Tools is the directory of .wasm tool modules (required).
	Tools string
	// Skills is a directory of Agent Skills to serve, "" for none.
	Skills string
	// HTTPAddr serves Streamable HTTP on this address (endpoint /mcp);
	// "" serves stdio.
	HTTPAddr string
	// Stdio asks for stdio explicitly; it excludes HTTPAddr.
	Stdio bool
	// Workers is the requests of one module served at once on stdio.
	Workers int
	// MaxBatch is the messages one JSON-RPC batch may hold.
	MaxBatch int
	// Name and Instructions are reported to clients; Version too.
	Name, Instructions, Version string
	// Watch reloads modules when files in the tools directory change.
	Watch bool
	// ReadyWait bounds how long a list request waits for the initial load
	// (0: until every module is loaded or refused). The default, 2 s, lets a
	// client's first list answer with what is loaded by then; the rest
	// follow with list_changed, so no list waits for the slowest module.
	ReadyWait time.Duration
	// GCHeadroom is the least room the Go heap is given to grow past its
	// live size (internal/heapfloor); 0 leaves Go's pacing. Ignored when
	// GOGC is set in the environment.
	GCHeadroom uint64
	// StateKeyFile holds the key that seals requestState ("" for a random
	// key per process, or the one shared by replicas of a Redis store).
	StateKeyFile string
	// LogLevel (debug, info, warn, error) and LogFormat (text, json) shape
	// the log written to Stderr.
	LogLevel, LogFormat string
	// EnvUsed names the environment variables the settings came from,
	// logged at start.
	EnvUsed []string

	// Engine is the engine's configuration; Run adds the logger, the
	// principal of a call, and the metrics' observers.
	Engine host.Config
	HTTP   HTTPConfig
	Auth   AuthConfig
	Ops    OpsConfig
	Tasks  TasksConfig
	Pull   PullConfig

	// Stdin and Stdout carry MCP on stdio; Stderr takes the log.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Defaults is the configuration of `wasmcp serve` with no flags but
// --tools: every default of the server is set here.
func Defaults() Config {
	return Config{
		Workers:    16,
		MaxBatch:   mcphttp.DefaultMaxBatch,
		Name:       "wasmcp",
		Version:    "dev",
		Watch:      true,
		ReadyWait:  2 * time.Second,
		GCHeadroom: 8 << 20,
		LogLevel:   "info",
		LogFormat:  "text",
		Engine:     DefaultEngine(),
		HTTP: HTTPConfig{
			Mode:              "streamable",
			MaxBody:           mcphttp.DefaultMaxBody,
			MaxHeaderBytes:    mcphttp.DefaultMaxHeaderBytes,
			MaxConns:          mcphttp.DefaultMaxConns(),
			MaxConnsPerAddr:   mcphttp.DefaultMaxConnsPerAddr,
			MaxCallsPerConn:   mcphttp.DefaultMaxConcurrentStreams,
			MaxSessions:       mcphttp.DefaultMaxSessions,
			MaxStreams:        mcphttp.DefaultMaxStreams,
			ReadTimeout:       mcphttp.DefaultReadTimeout,
			ReadHeaderTimeout: mcphttp.DefaultReadHeaderTimeout,
			IdleTimeout:       mcphttp.DefaultIdleTimeout,
			ShutdownGrace:     10 * time.Second,
			SessionIdle:       30 * time.Minute,
			KeepAlive:         15 * time.Second,
			Replay:            256,
			WriteTimeout:      30 * time.Second,
			HTTP3MaxStreams:   mcphttp.DefaultHTTP3MaxStreams,
		},
		Auth: AuthConfig{
			Provider:         "none",
			Leeway:           30 * time.Second,
			JWKSMinRefresh:   30 * time.Second,
			KeyHeader:        "Authorization",
			ForwardTimeout:   5 * time.Second,
			ForwardCacheTTL:  30 * time.Second,
			ForwardPrincipal: "X-Auth-Principal",
			ForwardScopes:    "X-Auth-Scopes",
			AuditCalls:       true,
		},
		Ops: OpsConfig{OTLPProtocol: telemetry.ProtocolHTTP, TraceSample: 1},
		Tasks: TasksConfig{
			InlineMS:           int(protocol.DefaultTaskInline / time.Millisecond),
			TTL:                tasks.DefaultTTL,
			MaxTTL:             tasks.DefaultMaxTTL,
			PollInterval:       tasks.DefaultPollInterval,
			MaxTasks:           tasks.DefaultMaxActive,
			MaxPerClient:       tasks.DefaultMaxPerOwner,
			MaxResultMiB:       tasks.DefaultMaxResultBytes >> 20,
			MaxStoredMiB:       tasks.DefaultMaxStoredBytes >> 20,
			MaxStoredClientMiB: tasks.DefaultMaxStoredPerOwner >> 20,
			Sweep:              tasks.DefaultSweepEvery,
			Lease:              tasks.DefaultLease,
		},
		Pull: PullConfig{OCI: oci.Options{Timeout: oci.DefaultTimeout, MaxModule: oci.DefaultMaxModule}},
	}
}

// DefaultEngine is the engine configuration of serve's defaults (the
// flags every command that loads modules shares).
func DefaultEngine() host.Config {
	l := host.DefaultLimits()
	return host.Config{
		CacheMaxBytes:    host.DefaultCacheMaxBytes,
		Limits:           host.Limits{MemoryBytes: l.MemoryBytes, Timeout: l.Timeout, OutputBytes: l.OutputBytes, Structure: host.Structure{Functions: l.Structure.Functions, CodeBytes: l.Structure.CodeBytes}},
		InstrumentLoops:  true,
		CodeMemory:       host.DefaultCodeMemory,
		Compilations:     host.DefaultCompilations(),
		DescribeTimeout:  host.DefaultDescribeTimeout,
		SnapshotTimeout:  host.DefaultSnapshotTimeout,
		InterpreterFirst: true,
	}
}
