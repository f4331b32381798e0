package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/abi/uritemplate"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/schema"
	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
	"github.com/wasmcp/wasmcp/skills"
)

// Module is a compiled, described tool module. It is immutable and safe for
// concurrent use; every Call runs in a fresh instance.
//
// A module opened from a cached description (Engine.Open) is listed
// before it is compiled: its code is compiled on its first call, and may
// be closed again when the engine's code budget is exceeded and compiled
// again on a later call (code.go).
type Module struct {
	name    string
	hash    string
	engine  *Engine
	desc    *abi.Description
	descLen int // bytes of the description's JSON
	schemas map[string]contract.ToolSchemas
	skills  []*skills.Skill // built from desc.Skills (skills.go)
	policy  Policy
	base    wazero.ModuleConfig // for a start-up, and the calls of a module without a snapshot
	// snapBase is base without Policy.StartEnv: the calls from a snapshot.
	snapBase wazero.ModuleConfig
	gate     *gate
	mounts   []builtMount // set with a read-write mount: each run gets its file system (writebudget.go)
	seq      atomic.Int64
	egress   *egress.Client // outbound HTTP (http.go); nil without a grant
	mcp      *mcpInfo       // set when the module is an MCP server (mcpserver.go)

	slot codeSlot // the compiled code, when there is some (code.go)

	// snapRetry: a start-up cut by a busy machine is being taken again
	// in the background (snapshot.go, retrySnapshot).
	snapRetry atomic.Bool

	// timeoutErr is the cause of a call's end at the policy's timeout,
	// made once so that a call does not format it.
	timeoutErr *limitError
}

// timeoutCause is the cause a call's context ends with at its deadline d.
func (m *Module) timeoutCause(d time.Duration) error {
	if m.timeoutErr != nil && d == m.policy.Limits.Timeout {
		return m.timeoutErr
	}
	return timeoutError(d)
}

func timeoutError(d time.Duration) *limitError {
	return &limitError{fmt.Sprintf("deadline of %s exceeded (limit timeout)", d)}
}

// Name is the module's name (its file name without .wasm).
func (m *Module) Name() string { return m.name }

// Queued is the number of calls waiting for an instance slot (policy
// maxInstances); always 0 for a module without the limit.
func (m *Module) Queued() int { return m.gate.queued() }

// Hash is the hex SHA-256 of the module's bytes.
func (m *Module) Hash() string { return m.hash }

// Description is what the module offers. Do not modify it.
func (m *Module) Description() *abi.Description { return m.desc }

// Schemas returns the compiled schemas of one of the module's tools.
func (m *Module) Schemas(tool string) (contract.ToolSchemas, bool) {
	s, ok := m.schemas[tool]
	return s, ok
}

// Policy is the module's effective policy.
func (m *Module) Policy() Policy { return m.policy }

// Access returns the module's grants (its policy's Access), not to be
// modified.
func (m *Module) Access() *Access { return &m.policy.Access }

// Reactor reports whether the module is a reactor (exports wasmcp_main),
// as its last compilation found; false for a module not compiled yet.
func (m *Module) Reactor() bool { return m.slot.reactor.Load() }

// Load compiles a module, checks its imports and exports, learns its
// description (from its custom section, the description cache, or by
// running it once with wasmcp/describe) and validates it. The module keeps
// its code until it is closed.
func (e *Engine) Load(ctx context.Context, name string, wasm []byte, p Policy) (*Module, error) {
	return e.load(ctx, name, wasm, "", p, nil)
}

// Open is Load for a server with many modules: when the description of
// wasm is in the description cache, the module is returned at once,
// described but not compiled, and compiled on its first call; otherwise it
// is loaded as Load does. hash is ModuleHash(wasm), or "" to have Open
// compute it (a caller that needs it anyway saves a pass over the bytes).
// src reads the module's bytes again whenever its code must be compiled
// and the engine's copy of them is missing (first call, or a call after
// the engine's code budget closed it); bytes whose hash is not the
// module's fail that call.
func (e *Engine) Open(ctx context.Context, name string, wasm []byte, hash string, p Policy, src func() ([]byte, error)) (*Module, error) {
	p.Limits = p.Limits.WithDefaults(e.cfg.Limits)
	if hash == "" {
		hash = hexSum(wasm)
	}
	e.descs.keepModule(hash, wasm)
	if e.descs.has(hash) || e.descs.has(hash+mcpCacheSuffix) {
		m, err := e.newModule(name, hash, p, src)
		if err != nil {
			return nil, err
		}
		if d, size, ok := m.cachedDescription(); ok {
			if err := m.setDescription(d, size); err != nil {
				return nil, err
			}
			// Until compiled, the room kept for its first call is an
			// estimate (no globals, an empty initial memory).
			e.mem.register(m, instanceCost(p.Limits, nil)+growthStep)
			e.log.Info("module described", "module", name, "sha256", hash[:12], "tools", len(d.Tools),
				"resources", len(d.Resources)+len(d.ResourceTemplates), "prompts", len(d.Prompts), "compiled", false,
				"mode", m.Mode())
			return m, nil
		}
	}
	return e.load(ctx, name, wasm, hash, p, src)
}

// cachedDescription looks the module's description up in the description
// cache, as its policy's mode allows: a wasmcp guest's, then an MCP
// server's (which sets m.mcp).
func (m *Module) cachedDescription() (*abi.Description, int, bool) {
	if m.policy.Mode != ModeMCPServer {
		if raw, ok := m.engine.descs.get(m.hash); ok {
			if d, err := m.parseDescription(raw, "cache"); err == nil {
				return d, len(raw), true
			}
		}
	}
	if m.policy.Mode != ModeABI {
		if raw, ok := m.engine.descs.get(m.hash + mcpCacheSuffix); ok {
			if d, info, err := m.parseMCPDescribed(raw, "cache"); err == nil {
				m.mcp = info
				return d, len(raw), true
			}
		}
	}
	return nil, 0, false
}

// OpenKnown is Open for a module known by its hash alone, without its
// bytes: when the engine's cache holds both its description and its copy
// of the module (kept by an earlier Open), the module is returned
// described and not compiled, as Open returns it, and ok is true. The
// code is compiled from the engine's copy, whose hash is checked, so the
// module always runs the bytes it was listed with. Otherwise ok is false
// and nothing was done: the caller reads the module and calls Open.
//
// A caller that learns hash without reading the bytes (the registry keeps
// an index of file stats to hashes) trusts its own bookkeeping: OpenKnown
// cannot tell whether a file still has that hash.
func (e *Engine) OpenKnown(ctx context.Context, name, hash string, p Policy, src func() ([]byte, error)) (m *Module, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, true, err
	}
	if e.descs == nil || !e.descs.hasModule(hash) || !(e.descs.has(hash) || e.descs.has(hash+mcpCacheSuffix)) {
		return nil, false, nil
	}
	p.Limits = p.Limits.WithDefaults(e.cfg.Limits)
	if m, err = e.newModule(name, hash, p, src); err != nil {
		return nil, true, err
	}
	d, size, found := m.cachedDescription()
	if !found {
		if m.egress != nil {
			m.egress.Close()
		}
		return nil, false, nil
	}
	if err := m.setDescription(d, size); err != nil {
		return nil, true, err
	}
	e.log.Info("module described", "module", name, "sha256", hash[:12], "tools", len(d.Tools),
		"resources", len(d.Resources)+len(d.ResourceTemplates), "prompts", len(d.Prompts), "compiled", false,
		"mode", m.Mode())
	return m, true, nil
}

// CacheDir is the directory of the engine's on-disk cache, private to
// this user, where a caller may keep its own cached state in a
// subdirectory of its own; "" when the engine keeps no cache on disk.
func (e *Engine) CacheDir() string { return e.dir }

// ModuleHash is a module's hash, as Module.Hash reports it: the hex
// SHA-256 of its bytes.
func ModuleHash(wasm []byte) string { return hexSum(wasm) }

// hexSum is the hex SHA-256 of b: a module's hash.
func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// newModule is a module without code or description yet.
func (e *Engine) newModule(name, hash string, p Policy, src func() ([]byte, error)) (*Module, error) {
	m := &Module{name: name, hash: hash, engine: e, policy: p, timeoutErr: timeoutError(p.Limits.Timeout)}
	m.slot.src = src
	base, gate, mounts, err := p.moduleConfig(name)
	if err != nil {
		return nil, &GuestError{Module: name, Kind: KindLoad, Msg: fmt.Sprintf("policy: %v", err)}
	}
	// Calls from a snapshot see Env; the start-up run, and every call
	// of a module without a snapshot, see StartEnv too.
	m.snapBase = base.WithRandSource(rand.Reader)
	m.base = m.snapBase
	for _, e := range p.StartEnv {
		m.base = m.base.WithEnv(e.Name, e.Value)
	}
	m.gate = gate
	for i := range mounts {
		if !mounts[i].m.ReadOnly {
			mounts[i].usage = e.diskUsage(mounts[i].fs.(*mountFS).root)
		}
	}
	warnOverQuota(context.Background(), e.log, name, mounts)
	m.mounts = mounts
	if err := m.setupEgress(); err != nil {
		return nil, &GuestError{Module: name, Kind: KindLoad, Msg: fmt.Sprintf("policy: %v", err)}
	}
	return m, nil
}

// setDescription validates d and makes it the module's.
func (m *Module) setDescription(d *abi.Description, size int) error {
	fail := func(err error) error {
		return &GuestError{Module: m.name, Kind: KindLoad, Msg: fmt.Sprintf("invalid description: %v", err)}
	}
	if err := m.validate(d); err != nil {
		return fail(err)
	}
	var err error
	if m.skills, err = buildSkills(d.Skills); err != nil {
		return fail(err)
	}
	m.desc, m.descLen = d, size
	return nil
}

func (e *Engine) load(ctx context.Context, name string, wasm []byte, hash string, p Policy, src func() ([]byte, error)) (*Module, error) {
	p.Limits = p.Limits.WithDefaults(e.cfg.Limits)
	if hash == "" {
		hash = hexSum(wasm)
	}
	m, err := e.newModule(name, hash, p, src)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	t := e.firstTier(m)
	if t == tierInterp {
		// Background compilations wait until this load (build and
		// describe) is over.
		e.interpBuilds.enter()
		defer e.interpBuilds.leave()
	}
	c, err := e.build(ctx, m, wasm, t)
	if err != nil {
		return nil, err
	}
	built := time.Since(start)
	ok := false
	defer func() {
		if !ok {
			c.closeBuilt(context.Background())
		}
	}()
	desc, size, err := m.describe(ctx, c)
	if err != nil && t == tierInterp && IsKind(err, KindLimit) && ctx.Err() == nil {
		// Too slow on the interpreter (its describe deadline, on a busy
		// machine): the compiled code decides, as without the tier.
		e.log.Info("module's describe run too slow on the interpreter; compiling it first", "module", name, "reason", err.Error())
		c.closeBuilt(context.Background())
		if c, err = e.build(ctx, m, wasm, tierCompiled); err != nil {
			ok = true // nothing left to close
			return nil, err
		}
		t = tierCompiled
		desc, size, err = m.describe(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	if err := m.setDescription(desc, size); err != nil {
		return nil, err
	}
	ok = true
	m.slot.install(c)
	e.code.added(m, c)
	e.mem.register(m, c.cost)
	if t == tierInterp {
		m.upgrade(wasm)
	} else {
		e.markWarm(m)
		e.compiled(m, c, built)
	}
	e.log.Info("module loaded", "module", name, "sha256", m.hash[:12], "tools", len(desc.Tools),
		"resources", len(desc.Resources)+len(desc.ResourceTemplates), "prompts", len(desc.Prompts), "reactor", c.reactor,
		"mode", m.Mode(), "tier", t.String(), "took", time.Since(start).Round(time.Millisecond))
	return m, nil
}

// build compiles wasm (in the engine's bounded compilation pool; a
// snapshot's start-up run in its own pool) and
// checks the compiled module's imports and exports.
func (e *Engine) build(ctx context.Context, m *Module, wasm []byte, t tier) (*compiled, error) {
	name := m.name
	fail := func(format string, a ...any) error {
		return &GuestError{Module: name, Kind: KindLoad, Msg: fmt.Sprintf(format, a...)}
	}
	// The module's structure is checked against the host's caps before
	// wazero sees it (prepare.go); the hash stays that of the module as
	// given.
	wasm, info, err := prepare(wasm, m.policy.Limits)
	if err != nil {
		return nil, fail("%v", err)
	}
	cost := instanceCost(m.policy.Limits, info)
	if err := e.mem.fits(cost); err != nil {
		return nil, fail("%v", err)
	}
	x, err := e.compileInPool(ctx, m, wasm, t)
	if err == nil && (x.r == nil || x.err != nil) {
		err = x.err
	}
	if err != nil {
		x.room.release()
		if x.r == nil {
			return nil, err
		}
		return nil, fail("does not compile: %v", err)
	}
	c := &compiled{runtime: x.r, code: x.code, interrupt: x.interrupt, size: codeCostFor(wasm, t), cost: cost, snap: x.snap, validated: x.id, tier: t, room: x.room}
	if x.snap.used {
		c.base = m.snapBase.WithNanotime(snapshotClock(x.snap.clock), 1)
		if x.snap.data != nil {
			c.image = &imagePool{ranges: x.snap.data}
			if st := x.snap.state; st != nil && memClass(uint64(st.Pages)*65536) >= 0 {
				// Memory 0 starts at the code's one page and grows to the
				// image's size before the guest runs: its buffer is taken
				// at that size, so the growth copies nothing.
				c.image.size = uint64(st.Pages) * 65536
			}
		}
	}
	if err := e.checkCompiled(c, info, m.policy.Limits); err != nil {
		c.closeBuilt(ctx)
		return nil, fail("%v", err)
	}
	return c, nil
}

// buildResult is what a compilation in the pool hands back.
type buildResult struct {
	r         wazero.Runtime
	code      wazero.CompiledModule
	interrupt bool
	err       error
	snap      snapshot
	id        string
	room      *loadRoom // the code's room in the code budget (compileSnapshot)
}

// compileInPool compiles wasm (with its snapshot, compileSnapshot) in a
// goroutine of its own. wazero cannot stop a compilation: a caller whose
// context ends stops waiting (so a signal always ends the process) with
// an error, the compilation ends on its own and its code is closed.
func (e *Engine) compileInPool(ctx context.Context, m *Module, wasm []byte, t tier) (buildResult, error) {
	name := m.name
	validated := m.slot.validatedID()
	ch := make(chan buildResult, 1)
	e.active.Add(1)
	go func() {
		defer e.active.Add(-1)
		done := e.slowLog(name)
		defer done()
		var x buildResult
		if e.beforeBuild != nil {
			x.err = e.beforeBuild(name, t)
		}
		if x.err == nil {
			x = e.compileSnapshot(ctx, context.WithoutCancel(ctx), m, wasm, validated, t == tierInterp)
		}
		e.built.Add(1)
		ch <- x
	}()
	select {
	case x := <-ch:
		return x, nil
	case <-ctx.Done():
		go func() {
			x := <-ch
			x.room.release()
			if x.code != nil {
				_ = x.code.Close(context.Background())
			}
		}()
		return buildResult{}, fmt.Errorf("compiling module %s: %w", name, context.Cause(ctx))
	}
}

// checkCompiled checks the compiled module's imports (WASI only, no
// memory) and exports (an entry point, its memory), and that the call's
// prepaid memory (its initial memory and a first step of growth, so that
// a small call does not fail on its first pages) fits the engine's
// budget, which it adds to c.cost.
func (e *Engine) checkCompiled(c *compiled, info *wasmrewrite.Info, limits Limits) error {
	code := c.code
	for _, f := range code.ImportedFunctions() {
		mod, fn, _ := f.Import()
		if mod != "wasi_snapshot_preview1" {
			return fmt.Errorf("imports %s.%s; a v%d guest may import only wasi_snapshot_preview1", mod, fn, abi.Version)
		}
	}
	if len(code.ImportedMemories()) > 0 {
		return errors.New("imports its memory; a guest must define and export its own")
	}
	if err := checkImports(c.runtime, code, info); err != nil {
		return err
	}
	exports := code.ExportedFunctions()
	if _, ok := exports[abi.ReactorEntry]; ok {
		c.reactor = true
		_, c.init = exports["_initialize"]
	} else if _, ok := exports["_start"]; !ok {
		return fmt.Errorf("exports neither _start (command) nor %s (reactor)", abi.ReactorEntry)
	}
	md, exported := code.ExportedMemories()["memory"]
	if !exported {
		return errors.New(`does not export its memory as "memory"`)
	}
	c.prepaid = min(int64(md.Min())*65536+growthStep, int64(limits.memoryPages())*65536)
	c.cost += c.prepaid
	return e.mem.fits(c.cost)
}

// describe finds the module's description: custom section, then the
// on-disk cache, then a describe call; for an MCP server (policy mode
// mcp-server, or in mode auto a module that answers the describe call
// with a JSON-RPC error), a discovery run (mcpserver.go).
//
// A description found in the custom section is put in the cache too, so
// that Open lists the module without compiling it next time. The describe
// call and the discovery run each have the engine's describe budget
// (Config.DescribeTimeout) as their deadline when that is shorter than the
// module's timeout.
func (m *Module) describe(ctx context.Context, c *compiled) (*abi.Description, int, error) {
	if m.policy.Mode == ModeMCPServer {
		if d, size, ok := m.cachedDescription(); ok {
			return d, size, nil
		}
		d, info, size, err := m.discover(ctx, c)
		if err != nil {
			return nil, 0, err
		}
		m.mcp = info
		return d, size, nil
	}
	var section []byte
	n := 0
	for _, s := range c.code.CustomSections() {
		if s.Name() == abi.CustomSection {
			section, n = s.Data(), n+1
		}
	}
	if n > 1 {
		return nil, 0, &GuestError{Module: m.name, Kind: KindLoad,
			Msg: fmt.Sprintf("has %d custom sections named %s; a module carries one description", n, abi.CustomSection)}
	}
	if n == 1 {
		// A C string array ends with a NUL; trailing NULs and
		// whitespace are not part of the JSON.
		section = bytes.TrimRight(section, "\x00 \t\r\n")
		d, err := m.parseDescription(section, "custom section "+abi.CustomSection)
		if err == nil {
			m.engine.descs.put(m.hash, section)
		}
		return d, len(section), err
	}
	if d, size, ok := m.cachedDescription(); ok {
		return d, size, nil
	}
	params, _ := json.Marshal(abi.DescribeParams{ABIVersions: abi.SupportedVersions(), Features: []string{abi.FeatureHTTP}})
	reply, err := m.loadCall(ctx, c, abi.MethodDescribe, params)
	if err != nil {
		return nil, 0, &GuestError{Module: m.name, Kind: KindLoad, Msg: "describe failed: " + err.Error(), Err: err}
	}
	if reply.Error != nil {
		if m.policy.Mode == ModeAuto {
			// It speaks JSON-RPC but not the wasmcp ABI: it may be an
			// MCP server.
			d, info, size, err := m.discover(ctx, c)
			if err == nil {
				m.mcp = info
				return d, size, nil
			}
			return nil, 0, &GuestError{Module: m.name, Kind: KindLoad,
				Msg: fmt.Sprintf("describe failed: %s; run as an MCP server: %v", reply.Error.Message, err), Err: err}
		}
		return nil, 0, &GuestError{Module: m.name, Kind: KindLoad, Msg: "describe failed: " + reply.Error.Message}
	}
	d, err := m.parseDescription(reply.Result, "describe")
	if err != nil {
		return nil, 0, err
	}
	m.engine.descs.put(m.hash, reply.Result)
	return d, len(reply.Result), nil
}

// loadCall runs a describe or discovery run at load, with the engine's
// describe budget as its deadline. Room in the memory budget is not the
// guest's to find: the run waits for it as long as ctx lasts, its
// deadline starting once it is admitted, and a run that failed because its
// memory could not grow while other calls held the budget runs again once
// a call gives memory back, rather than refusing the module.
func (m *Module) loadCall(ctx context.Context, c *compiled, method string, params []byte) (*contract.Reply, error) {
	b := m.engine.mem
	for {
		reply, err := m.callWith(ctx, c, method, params, nil, m.engine.cfg.DescribeTimeout, nil)
		if err == nil || b == nil || !errors.Is(err, errMemoryBudget) || ctx.Err() != nil {
			return reply, err
		}
		m.engine.log.Info("a run at load ran out of room in the memory budget; it runs again once calls give memory back",
			"module", m.name, "method", method, "err", err)
		// The next release, or a second at most (a release may have
		// come between the run's end and this wait).
		t := time.NewTimer(time.Second)
		select {
		case <-b.released():
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, err
		}
		t.Stop()
	}
}

func (m *Module) parseDescription(raw []byte, from string) (*abi.Description, error) {
	var d abi.Description
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, &GuestError{Module: m.name, Kind: KindLoad, Msg: fmt.Sprintf("description (%s) is not valid JSON: %v", from, err)}
	}
	if !slices.Contains(abi.SupportedVersions(), d.ABIVersion) {
		return nil, &GuestError{Module: m.name, Kind: KindLoad,
			Msg: fmt.Sprintf("module %s speaks wasmcp ABI v%d; this host speaks v%d", m.name, d.ABIVersion, abi.Version)}
	}
	return &d, nil
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_.\-/]{1,128}$`)

// validate checks names and compiles schemas.
func (m *Module) validate(d *abi.Description) error {
	m.schemas = make(map[string]contract.ToolSchemas, len(d.Tools))
	for i := range d.Tools {
		t := &d.Tools[i]
		if !toolName.MatchString(t.Name) {
			return fmt.Errorf("tool name %q must match %s", t.Name, toolName)
		}
		if _, dup := m.schemas[t.Name]; dup {
			return fmt.Errorf("tool %q declared twice", t.Name)
		}
		switch t.TaskSupport() {
		case abi.TaskForbidden, abi.TaskOptional, abi.TaskRequired:
		default:
			return fmt.Errorf("tool %q: taskSupport %q is not forbidden, optional or required", t.Name, t.Execution.TaskSupport)
		}
		if len(t.InputSchema) == 0 {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		var ts contract.ToolSchemas
		in, err := schema.Compile(t.InputSchema, true)
		if err != nil {
			return fmt.Errorf("tool %q inputSchema: %w", t.Name, err)
		}
		ts.Input = in
		if len(t.OutputSchema) > 0 {
			out, err := schema.CompileOutput(t.OutputSchema)
			if err != nil {
				return fmt.Errorf("tool %q outputSchema: %w", t.Name, err)
			}
			ts.Output = out // set only when declared: never a typed nil
		}
		m.schemas[t.Name] = ts
	}
	for _, r := range d.Resources {
		if r.URI == "" || r.Name == "" {
			return fmt.Errorf("resource %q needs a uri and a name", r.URI)
		}
	}
	for _, t := range d.ResourceTemplates {
		if _, err := uritemplate.Parse(t.URITemplate); err != nil || t.Name == "" {
			return fmt.Errorf("resource template %q needs a valid uriTemplate and a name", t.URITemplate)
		}
	}
	seen := map[string]bool{}
	for _, p := range d.Prompts {
		if p.Name == "" || seen[p.Name] {
			return fmt.Errorf("prompt %q: empty or duplicate name", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}
