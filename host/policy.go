package host

import (
	"context"
	"fmt"
	"os"
	"path"
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/internal/egress"
)

// Policy is what one module is granted. The zero Policy grants nothing
// beyond the ABI's defaults: no files, no environment, the engine's limits.
type Policy struct {
	// Limits override the engine's defaults field by field.
	Limits Limits
	// MaxInstances caps the module's concurrent instances; 0 is no cap.
	MaxInstances int
	// MaxQueue caps the calls waiting for an instance once MaxInstances
	// run; further calls fail at once. 0 means DefaultMaxQueue; NoQueue
	// means calls fail at once whenever MaxInstances are running.
	MaxQueue int
	// Mounts are the directories the guest may open.
	Mounts []Mount
	// Env are the environment variables the guest sees.
	Env []EnvVar
	// StartEnv are variables only a start-up sees, after Env: the
	// snapshot's start-up run, and every instance of a module that runs
	// without a snapshot. An instance from a snapshot starts from the
	// state that start-up left, so a guest that read them there holds
	// what it needs, and the call does not copy them into its instance
	// (the JavaScript runner's WASMCP_SCRIPT: a bundled script's source,
	// hundreds of kilobytes, was a third of such a call's CPU). The
	// snapshot key covers them.
	StartEnv []EnvVar
	// NoSnapshot runs a module that asks for a snapshot (exports
	// abi.SnapshotEntry) without one: every instance runs its start-up.
	NoSnapshot bool
	// SnapshotMaxMemory bounds the memory image a snapshot adds to the
	// module (its start-up's memory as data segments, which the compiled
	// module keeps); 0 is DefaultSnapshotMaxMemory. A start-up that keeps
	// more runs as a plain reactor, with a log line saying why.
	SnapshotMaxMemory int64
	// SharedCode compiles the module's snapshot as code apart from its
	// state (wasmrewrite.Split): every module whose snapshots split into
	// the same code (scripts on one JavaScript runner) shares one
	// compilation, and each call's instance is given its module's state
	// (memory image and globals) before it runs. For modules that differ
	// only in what their start-up read (the environment).
	SharedCode bool
	// DiscardStderr drops the guest's stderr instead of logging it.
	DiscardStderr bool
	// Mode says whether the module is a wasmcp guest or an MCP server;
	// ModeAuto (the zero value) lets the module tell.
	Mode Mode
	// HTTP grants outbound HTTP (abi.MethodHTTP); nil grants none.
	HTTP *egress.Policy
	// Access says who may list and use the module's tools, resources and
	// prompts. The host only carries it; the server enforces it.
	Access Access
}

// Access is a module's grants: who may list and use its items, and what
// its guest learns of its caller.
type Access struct {
	// Grant applies to every item of the module without one of its own.
	Grant Grant
	// Tools, Resources and Prompts hold the grants of single items, by
	// tool name, resource URI (or template) and prompt name.
	Tools, Resources, Prompts map[string]Grant
	// ExposePrincipal gives the guest its caller's name and scopes in
	// _meta["wasmcp/principal"]; credentials never reach a guest.
	ExposePrincipal bool
}

// Grant names who may use an item: a caller holding any of Scopes, or
// named in Principals. A zero Grant (neither listed) allows everyone.
type Grant struct {
	Scopes     []string `json:"scopes,omitempty"`
	Principals []string `json:"principals,omitempty"`
}

// Open reports whether g allows everyone.
func (g Grant) Open() bool { return len(g.Scopes) == 0 && len(g.Principals) == 0 }

// Allows reports whether g allows the caller named principal holding
// scopes.
func (g Grant) Allows(principal string, scopes []string) bool {
	if g.Open() {
		return true
	}
	for _, p := range g.Principals {
		if p == principal {
			return true
		}
	}
	for _, want := range g.Scopes {
		for _, s := range scopes {
			if s == want {
				return true
			}
		}
	}
	return false
}

// For returns the grant of one item: kind is "tool", "resource" or
// "prompt".
func (a *Access) For(kind, name string) Grant {
	var m map[string]Grant
	switch kind {
	case "tool":
		m = a.Tools
	case "resource":
		m = a.Resources
	case "prompt":
		m = a.Prompts
	}
	if g, ok := m[name]; ok {
		return g
	}
	return a.Grant
}

// Mount grants the guest a host directory.
type Mount struct {
	HostPath  string `json:"host"`
	GuestPath string `json:"guest"`
	ReadOnly  bool   `json:"readOnly"`
	// MaxWriteBytes bounds what one call (and the snapshot start-up run)
	// may write to a read-write mount: the bytes of its writes and what
	// its truncates grow files by. 0 is DefaultMaxWriteBytes. A write
	// that would pass it fails (the guest sees ENOSPC) and the call's
	// error says so.
	MaxWriteBytes int64 `json:"maxWriteBytes,omitempty"`
	// MaxDiskBytes is a read-write mount's quota: what the tree under its
	// host directory may hold across calls (the apparent size of its
	// files plus 4 KiB per name). 0 is DefaultMaxDiskBytes. A write or
	// creation that would pass it fails (ENOSPC) and the call's error says
	// so.
	MaxDiskBytes int64 `json:"maxDiskBytes,omitempty"`
}

// NoQueue as Policy.MaxQueue lets no call wait for an instance.
const NoQueue = -1

// DefaultMaxQueue is the queue of a module with MaxInstances and no
// MaxQueue.
const DefaultMaxQueue = 64

// QueueSetting is the max_queue that applies once MaxInstances caps the
// module: DefaultMaxQueue when unset, 0 for NoQueue. Unlike QueueBound it
// does not depend on MaxInstances.
func (p Policy) QueueSetting() int {
	switch {
	case p.MaxQueue < 0:
		return 0
	case p.MaxQueue == 0:
		return DefaultMaxQueue
	}
	return p.MaxQueue
}

// EnvVar is one environment variable given to the guest.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// From names the host variable Value was read from; empty for a
	// literal value. It is for display (`wasmcp inspect` shows names and
	// sources, never values).
	From string `json:"from,omitempty"`
}

// QueueBound is the effective MaxQueue: how many calls may wait for an
// instance (0 when MaxInstances is 0, since then no call waits).
func (p Policy) QueueBound() int {
	switch {
	case p.MaxInstances <= 0:
		return 0
	}
	return p.QueueSetting()
}

// moduleConfig builds the per-module base configuration (everything but
// stdio) once, and the module's concurrency gate. With a read-write mount
// the base has no file system: each run gets its own (fsConfig), so each
// has its own write budget; the mounts are returned for that.
func (p Policy) moduleConfig(name string) (wazero.ModuleConfig, *gate, []builtMount, error) {
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs(name).
		WithStartFunctions().
		WithSysWalltime().
		WithSysNanotime().
		WithSysNanosleep()
	var mounts []builtMount
	for _, m := range p.Mounts {
		st, err := os.Stat(m.HostPath)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("mount %s: %w", m.HostPath, err)
		}
		if !st.IsDir() {
			return nil, nil, nil, fmt.Errorf("mount %s: not a directory", m.HostPath)
		}
		gp := m.GuestPath
		if gp == "" || !path.IsAbs(gp) {
			return nil, nil, nil, fmt.Errorf("mount %s: guest path %q must be absolute", m.HostPath, gp)
		}
		if m.MaxWriteBytes < 0 {
			return nil, nil, nil, fmt.Errorf("mount %s: max write bytes %d is negative", m.HostPath, m.MaxWriteBytes)
		}
		if m.MaxDiskBytes < 0 {
			return nil, nil, nil, fmt.Errorf("mount %s: max disk bytes %d is negative", m.HostPath, m.MaxDiskBytes)
		}
		mfs, err := newMountFS(m)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("mount %s: %w", m.HostPath, err)
		}
		mounts = append(mounts, builtMount{m: m, fs: mfs})
	}
	if err := nestedWritable(mounts); err != nil {
		return nil, nil, nil, err
	}
	if len(mounts) > 0 && !hasWritable(mounts) {
		fsc, _ := fsConfig(mounts)
		cfg = cfg.WithFSConfig(fsc)
	}
	for _, e := range p.Env {
		cfg = cfg.WithEnv(e.Name, e.Value)
	}
	var g *gate
	if p.MaxInstances > 0 {
		g = &gate{slots: make(chan struct{}, p.MaxInstances), maxQueue: int64(p.QueueBound())}
	}
	if !hasWritable(mounts) {
		mounts = nil
	}
	return cfg, g, mounts, nil
}

// gate bounds a module's concurrent instances and its queue.
type gate struct {
	slots    chan struct{}
	waiting  atomic.Int64
	maxQueue int64
}

func (g *gate) acquire(ctx context.Context, module string) error {
	if g == nil {
		return nil
	}
	select {
	case g.slots <- struct{}{}:
		return nil
	default:
	}
	if g.waiting.Add(1) > g.maxQueue {
		g.waiting.Add(-1)
		return &GuestError{Module: module, Kind: KindLimit,
			Msg: fmt.Sprintf("busy: %d instances running and %d calls queued (limits max_instances=%d, max_queue=%d)",
				cap(g.slots), g.maxQueue, cap(g.slots), g.maxQueue)}
	}
	defer g.waiting.Add(-1)
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &GuestError{Module: module, Kind: KindCanceled, Msg: "canceled while queued for an instance", Err: ctx.Err()}
	}
}

// queued is the number of calls waiting for a slot.
func (g *gate) queued() int {
	if g == nil {
		return 0
	}
	return int(g.waiting.Load())
}

func (g *gate) release() {
	if g != nil {
		<-g.slots
	}
}
