package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/schema"
	"github.com/wasmcp/wasmcp/internal/uritemplate"
	"github.com/wasmcp/wasmcp/skills"
)

// Module is a compiled, described tool module. It is immutable and safe for
// concurrent use; every Call runs in a fresh instance.
type Module struct {
	name    string
	hash    string
	engine  *Engine
	runtime wazero.Runtime
	code    wazero.CompiledModule
	desc    *abi.Description
	schemas map[string]contract.ToolSchemas
	skills  []*skills.Skill // built from desc.Skills (skills.go)
	policy  Policy
	reactor bool
	init    bool // reactor exports _initialize
	base    wazero.ModuleConfig
	gate    *gate
	cost    int64 // what one instance takes from the engine's memory budget
	seq     atomic.Int64
	egress  *egress.Client // outbound HTTP (http.go); nil without a grant

	// interrupt: the module was instrumented (Engine.compile); a call stops
	// it by setting its interruptExport global.
	interrupt bool
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

// Reactor reports whether the module is a reactor (exports wasmcp_main).
func (m *Module) Reactor() bool { return m.reactor }

// Close releases the compiled code. Calls still running finish first only if
// the caller waits for them; new calls fail.
func (m *Module) Close(ctx context.Context) error {
	if m.egress != nil {
		m.egress.Close()
	}
	return m.code.Close(ctx)
}

// Load compiles a module, checks its imports and exports, learns its
// description (from its custom section, the description cache, or by
// running it once with wasmcp/describe) and validates it.
func (e *Engine) Load(ctx context.Context, name string, wasm []byte, p Policy) (*Module, error) {
	p.Limits = p.Limits.WithDefaults(e.cfg.Limits)
	sum := sha256.Sum256(wasm) // of the module as given, before prepare
	m := &Module{name: name, hash: hex.EncodeToString(sum[:]), engine: e, policy: p}
	fail := func(format string, a ...any) error {
		return &GuestError{Module: name, Kind: KindLoad, Msg: fmt.Sprintf(format, a...)}
	}
	wasm, info, err := prepare(wasm, p.Limits)
	if err != nil {
		return nil, fail("%v", err)
	}
	m.cost = instanceCost(p.Limits, info)
	if err := e.mem.fits(m.cost); err != nil {
		return nil, fail("%v", err)
	}
	r, code, interrupt, err := e.compile(ctx, name, p.Limits.memoryPages(), wasm)
	if r == nil {
		return nil, err
	}
	m.runtime = r
	if err != nil {
		return nil, fail("does not compile: %v", err)
	}
	m.interrupt = interrupt
	m.code = code
	ok := false
	defer func() {
		if !ok {
			_ = code.Close(ctx)
		}
	}()
	for _, f := range code.ImportedFunctions() {
		mod, fn, _ := f.Import()
		if mod != "wasi_snapshot_preview1" {
			return nil, fail("imports %s.%s; a v%d guest may import only wasi_snapshot_preview1", mod, fn, abi.Version)
		}
	}
	if len(code.ImportedMemories()) > 0 {
		return nil, fail("imports its memory; a guest must define and export its own")
	}
	if err := checkImports(r, code, info); err != nil {
		return nil, fail("%v", err)
	}
	exports := code.ExportedFunctions()
	if _, ok := exports[abi.ReactorEntry]; ok {
		m.reactor = true
		_, m.init = exports["_initialize"]
	} else if _, ok := exports["_start"]; !ok {
		return nil, fail("exports neither _start (command) nor %s (reactor)", abi.ReactorEntry)
	}
	if _, ok := code.ExportedMemories()["memory"]; !ok {
		return nil, fail(`does not export its memory as "memory"`)
	}
	base, gate, err := p.moduleConfig(name)
	if err != nil {
		return nil, fail("policy: %v", err)
	}
	m.base = base.WithRandSource(rand.Reader)
	m.gate = gate
	if err := m.setupEgress(); err != nil {
		return nil, fail("policy: %v", err)
	}

	desc, err := m.describe(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.validate(desc); err != nil {
		return nil, fail("invalid description: %v", err)
	}
	if m.skills, err = buildSkills(desc.Skills); err != nil {
		return nil, fail("invalid description: %v", err)
	}
	m.desc = desc
	ok = true
	e.log.Info("module loaded", "module", name, "sha256", m.hash[:12], "tools", len(desc.Tools),
		"resources", len(desc.Resources)+len(desc.ResourceTemplates), "prompts", len(desc.Prompts), "reactor", m.reactor)
	return m, nil
}

// describe finds the module's description: custom section, then the
// on-disk cache, then a describe call.
func (m *Module) describe(ctx context.Context) (*abi.Description, error) {
	var section []byte
	n := 0
	for _, s := range m.code.CustomSections() {
		if s.Name() == abi.CustomSection {
			section, n = s.Data(), n+1
		}
	}
	if n > 1 {
		return nil, &GuestError{Module: m.name, Kind: KindLoad,
			Msg: fmt.Sprintf("has %d custom sections named %s; a module carries one description", n, abi.CustomSection)}
	}
	if n == 1 {
		// A C string array ends with a NUL; trailing NULs and
		// whitespace are not part of the JSON.
		section = bytes.TrimRight(section, "\x00 \t\r\n")
		return m.parseDescription(section, "custom section "+abi.CustomSection)
	}
	if raw, ok := m.engine.descs.get(m.hash); ok {
		if d, err := m.parseDescription(raw, "cache"); err == nil {
			return d, nil
		}
	}
	params, _ := json.Marshal(abi.DescribeParams{ABIVersions: abi.SupportedVersions(), Features: []string{abi.FeatureHTTP}})
	reply, err := m.Call(ctx, abi.MethodDescribe, params, nil)
	if err != nil {
		return nil, &GuestError{Module: m.name, Kind: KindLoad, Msg: "describe failed: " + err.Error(), Err: err}
	}
	if reply.Error != nil {
		return nil, &GuestError{Module: m.name, Kind: KindLoad, Msg: "describe failed: " + reply.Error.Message}
	}
	d, err := m.parseDescription(reply.Result, "describe")
	if err != nil {
		return nil, err
	}
	m.engine.descs.put(m.hash, reply.Result)
	return d, nil
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
