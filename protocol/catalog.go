package protocol

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/abi/uritemplate"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/skills"
)

// Module is what the protocol needs of a loaded tool module; *host.Module
// implements it.
type Module interface {
	Name() string
	Description() *abi.Description
	Schemas(tool string) (contract.ToolSchemas, bool)
	Call(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error)
}

// Catalog is an immutable view of everything the loaded modules offer,
// with the list pages encoded once. A Server swaps catalogs atomically.
type Catalog struct {
	modules   []Module
	tools     []*toolEntry
	toolIdx   map[string]*toolEntry
	resources []*resourceEntry
	resIdx    map[string]*resourceEntry
	templates []*templateEntry
	// matchOrder is templates in the order a URI is matched against
	// them (templateFor): templates spelled otherwise may match the same
	// URIs, so a newcomer's must not take reads an incumbent's serves.
	matchOrder []*templateEntry
	prompts    []*promptEntry
	promptIdx  map[string]*promptEntry
	// completions: prompt name or template string → module
	complete map[string]Module
	skills   *skillSet // skills.go
	pages    sync.Map  // pageKey → []byte
	// instructions are the modules' instructions, each under a heading
	// naming its module, in module order.
	instructions string
	// instrOf holds each module's section of instructions, in module
	// order, for a caller who may see only some modules.
	instrOf []moduleInstructions
	// owner maps kind NUL name to the module serving it: the incumbents
	// of the next catalog (NewCatalogOver).
	owner map[string]string
}

// moduleInstructions is one module's section of the instructions.
type moduleInstructions struct {
	mod  Module
	text string // "## <module>\n\n<instructions>"
}

type toolEntry struct {
	tool    *abi.Tool
	mod     Module
	schemas contract.ToolSchemas
	enc     [3][]byte     // by toolShape
	headers []ParamHeader // x-mcp-header bindings (paramheaders.go)
}

type resourceEntry struct {
	res *abi.Resource
	mod Module
	enc []byte
}

type templateEntry struct {
	tmpl *abi.ResourceTemplate
	t    *uritemplate.Template
	mod  Module
	enc  []byte
}

type promptEntry struct {
	prompt *abi.Prompt
	mod    Module
	enc    []byte
}

// Conflict is a name two modules both declare: Kept serves it, and the
// module Dropped is refused as a whole (none of its names is served).
type Conflict struct {
	Kind, Name, Kept, Dropped string
}

// Pulled is implemented by a module that can tell whether it was installed
// from a registry (pulled) rather than placed by the operator. Hand-placed
// modules win a name over pulled ones; a module without the method counts
// as hand-placed.
type Pulled interface {
	Pulled() bool
}

// NewCatalog builds a catalog with no incumbent (see NewCatalogOver).
func NewCatalog(mods []Module, log *slog.Logger) (*Catalog, []Conflict) {
	return newCatalog(nil, mods, nil, log)
}

// NewCatalogOver builds the catalog that replaces prev (nil at the first
// load). A tool, prompt, resource URI or template that a module serves in
// prev and still declares stays that module's. Other names go to modules
// in this order: hand-placed before pulled (Pulled), then by module name.
// A module that declares a name another module keeps is refused whole:
// it is left out of the catalog, reported as a Conflict and logged.
func NewCatalogOver(prev *Catalog, mods []Module, operatorSkills []*skills.Skill, log *slog.Logger) (*Catalog, []Conflict) {
	return newCatalog(prev, mods, operatorSkills, log)
}

// newCatalog builds the catalog of mods over prev (see NewCatalogOver)
// and the operator's skills.
func newCatalog(prev *Catalog, mods []Module, operatorSkills []*skills.Skill, log *slog.Logger) (*Catalog, []Conflict) {
	if log == nil {
		log = slog.Default()
	}
	sorted, conflicts := admit(prev, mods, log)
	b := &catalogBuilder{
		c: &Catalog{
			modules:   sorted,
			toolIdx:   map[string]*toolEntry{},
			resIdx:    map[string]*resourceEntry{},
			promptIdx: map[string]*promptEntry{},
			complete:  map[string]Module{},
		},
		log:       log,
		owner:     map[string]string{},
		tmplSeen:  map[string]bool{},
		conflicts: conflicts,
	}
	b.c.owner = b.owner
	var instr strings.Builder
	for _, m := range sorted {
		d := m.Description()
		if text := strings.TrimSpace(d.Instructions); text != "" {
			if instr.Len() > 0 {
				instr.WriteString("\n\n")
			}
			instr.WriteString("## " + m.Name() + "\n\n" + text)
			b.c.instrOf = append(b.c.instrOf, moduleInstructions{mod: m, text: "## " + m.Name() + "\n\n" + text})
		}
		b.addTools(m, d)
		b.addResources(m, d)
		b.addTemplates(m, d)
		b.addPrompts(m, d)
	}
	c := b.c
	conflicts = append(b.conflicts, c.addSkills(operatorSkills, log)...)
	sort.Slice(c.tools, func(i, j int) bool { return c.tools[i].tool.Name < c.tools[j].tool.Name })
	sort.Slice(c.resources, func(i, j int) bool { return c.resources[i].res.URI < c.resources[j].res.URI })
	sort.Slice(c.templates, func(i, j int) bool { return c.templates[i].tmpl.URITemplate < c.templates[j].tmpl.URITemplate })
	c.matchOrder = matchOrder(prev, c.templates)
	sort.Slice(c.prompts, func(i, j int) bool { return c.prompts[i].prompt.Name < c.prompts[j].prompt.Name })
	c.instructions = instr.String()
	return c, conflicts
}

// matchOrder orders templates (sorted by template) for matching: a
// template its module served in prev first, then hand-placed modules'
// before pulled ones, each group by template.
func matchOrder(prev *Catalog, templates []*templateEntry) []*templateEntry {
	rank := func(e *templateEntry) int {
		switch {
		case prev != nil && prev.owner["template\x00"+e.tmpl.URITemplate] == e.mod.Name():
			return 0
		case !isPulled(e.mod):
			return 1
		}
		return 2
	}
	out := slices.Clone(templates)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// templateFor is the template a URI no resource has is read through: the
// first in matchOrder that matches it, or nil.
func (c *Catalog) templateFor(uri string) *templateEntry {
	for _, t := range c.matchOrder {
		if _, ok := t.t.Match(uri); ok {
			return t
		}
	}
	return nil
}

// catalogBuilder is newCatalog's state while it takes the modules in
// name order: the catalog so far, who owns each name, and the conflicts.
type catalogBuilder struct {
	c         *Catalog
	log       *slog.Logger
	owner     map[string]string // kind NUL name → the module that has it
	tmplSeen  map[string]bool
	conflicts []Conflict
}

// isPulled reports whether m says it was installed from a registry.
func isPulled(m Module) bool {
	p, ok := m.(Pulled)
	return ok && p.Pulled()
}

// declared lists the kind NUL name keys of every name d declares.
func declared(d *abi.Description) []string {
	var keys []string
	for _, t := range d.Tools {
		keys = append(keys, "tool\x00"+t.Name)
	}
	for _, r := range d.Resources {
		keys = append(keys, "resource\x00"+r.URI)
	}
	for _, rt := range d.ResourceTemplates {
		keys = append(keys, "template\x00"+rt.URITemplate)
	}
	for _, p := range d.Prompts {
		keys = append(keys, "prompt\x00"+p.Name)
	}
	return keys
}

// admit decides which modules the catalog takes, and returns them in
// name order with the conflicts of those it refuses. First every name an
// incumbent (its module in prev) still declares is reserved for it; then
// modules are taken hand-placed first, pulled after, each in name order,
// and a module declaring a name reserved for or taken by another module
// is refused whole: a module half served would surprise its caller.
func admit(prev *Catalog, mods []Module, log *slog.Logger) ([]Module, []Conflict) {
	order := append([]Module(nil), mods...)
	sort.Slice(order, func(i, j int) bool {
		if pi, pj := isPulled(order[i]), isPulled(order[j]); pi != pj {
			return !pi
		}
		return order[i].Name() < order[j].Name()
	})
	keysOf := make([][]string, len(order))
	held := map[string]string{}
	for i, m := range order {
		keysOf[i] = declared(m.Description())
		if prev == nil {
			continue
		}
		for _, k := range keysOf[i] {
			if prev.owner[k] == m.Name() {
				held[k] = m.Name()
			}
		}
	}
	taken := map[string]string{}
	var conflicts []Conflict
	admitted := make([]Module, 0, len(order))
next:
	for i, m := range order {
		for _, k := range keysOf[i] {
			owner, ok := held[k]
			if !ok {
				owner, ok = taken[k]
			}
			if ok && owner != m.Name() {
				kind, name, _ := strings.Cut(k, "\x00")
				conflicts = append(conflicts, Conflict{Kind: kind, Name: name, Kept: owner, Dropped: m.Name()})
				log.Warn("module refused: it declares a name another module serves", "module", m.Name(), "kind", kind, "name", shortText(name), "served_by", owner)
				continue next
			}
		}
		for _, k := range keysOf[i] {
			taken[k] = m.Name()
		}
		admitted = append(admitted, m)
	}
	sort.Slice(admitted, func(i, j int) bool { return admitted[i].Name() < admitted[j].Name() })
	return admitted, conflicts
}

// claim gives kind's name to mod unless an earlier module has it; then
// the conflict is recorded and logged, and claim returns false.
func (b *catalogBuilder) claim(kind, name, mod string) bool {
	key := kind + "\x00" + name
	if prev, ok := b.owner[key]; ok {
		b.conflicts = append(b.conflicts, Conflict{Kind: kind, Name: name, Kept: prev, Dropped: mod})
		b.log.Warn("duplicate name; the first module keeps it", "kind", kind, "name", name, "kept", prev, "dropped", mod)
		return false
	}
	b.owner[key] = mod
	return true
}

// refuse logs and reports true when a declaration's texts have a problem.
func (b *catalogBuilder) refuse(kind, name, mod, problem string) bool {
	if problem == "" {
		return false
	}
	b.log.Warn("declaration refused", "kind", kind, "name", shortText(name), "module", mod, "why", problem)
	return true
}

// addTools adds the tools m declares, each encoded in every shape. It,
// like addResources, addTemplates and addPrompts, works on copies of the
// declarations: the module's description is never written.
func (b *catalogBuilder) addTools(m Module, d *abi.Description) {
	for i := range d.Tools {
		// A copy: the description is the module's, shared by every catalog
		// built from it (a reload builds one while the last still serves).
		tc := d.Tools[i]
		t := &tc
		t.Meta = withoutHostKeys(t.Meta)
		if b.refuse("tool", t.Name, m.Name(), toolTextProblem(t)) || !b.claim("tool", t.Name, m.Name()) {
			continue
		}
		s, _ := m.Schemas(t.Name)
		e := &toolEntry{tool: t, mod: m, schemas: s, headers: toolParamHeaders(t.Name, t.InputSchema, b.log)}
		for sh := range e.enc {
			e.enc[sh] = encodeTool(t, toolShape(sh))
		}
		b.c.tools = append(b.c.tools, e)
		b.c.toolIdx[t.Name] = e
	}
}

// addResources adds the resources m declares.
func (b *catalogBuilder) addResources(m Module, d *abi.Description) {
	for i := range d.Resources {
		rc := d.Resources[i]
		r := &rc
		r.Meta = withoutHostKeys(r.Meta)
		if b.refuse("resource", r.URI, m.Name(), resourceTextProblem(r)) || !b.claim("resource", r.URI, m.Name()) {
			continue
		}
		enc, _ := json.Marshal(r)
		e := &resourceEntry{res: r, mod: m, enc: enc}
		b.c.resources = append(b.c.resources, e)
		b.c.resIdx[r.URI] = e
	}
}

// addTemplates adds the resource templates m declares that parse.
func (b *catalogBuilder) addTemplates(m Module, d *abi.Description) {
	for i := range d.ResourceTemplates {
		rtc := d.ResourceTemplates[i]
		rt := &rtc
		rt.Meta = withoutHostKeys(rt.Meta)
		t, err := uritemplate.Parse(rt.URITemplate)
		if err != nil || b.refuse("template", rt.URITemplate, m.Name(), templateTextProblem(rt)) || b.tmplSeen[rt.URITemplate] || !b.claim("template", rt.URITemplate, m.Name()) {
			continue
		}
		b.tmplSeen[rt.URITemplate] = true
		enc, _ := json.Marshal(rt)
		b.c.templates = append(b.c.templates, &templateEntry{tmpl: rt, t: t, mod: m, enc: enc})
		if d.Completions {
			b.c.complete["template\x00"+rt.URITemplate] = m
		}
	}
}

// addPrompts adds the prompts m declares.
func (b *catalogBuilder) addPrompts(m Module, d *abi.Description) {
	for i := range d.Prompts {
		pc := d.Prompts[i]
		p := &pc
		p.Meta = withoutHostKeys(p.Meta)
		if b.refuse("prompt", p.Name, m.Name(), promptTextProblem(p)) || !b.claim("prompt", p.Name, m.Name()) {
			continue
		}
		enc, _ := json.Marshal(p)
		e := &promptEntry{prompt: p, mod: m, enc: enc}
		b.c.prompts = append(b.c.prompts, e)
		b.c.promptIdx[p.Name] = e
		if d.Completions {
			b.c.complete["prompt\x00"+p.Name] = m
		}
	}
}

// Modules returns the catalog's modules in name order.
func (c *Catalog) Modules() []Module { return c.modules }

// Tool returns the module serving a tool.
func (c *Catalog) Tool(name string) (Module, bool) {
	e, ok := c.toolIdx[name]
	if !ok {
		return nil, false
	}
	return e.mod, true
}

// Counts returns how many tools, resources (with templates) and prompts the
// catalog serves.
func (c *Catalog) Counts() (tools, resources, prompts int) {
	return len(c.tools), len(c.resources) + len(c.templates), len(c.prompts)
}

// HasCompletions reports whether any module answers completion/complete.
func (c *Catalog) HasCompletions() bool { return len(c.complete) > 0 }

// toolShape selects the fields of a tool a revision knows.
type toolShape int

const (
	shapeOld  toolShape = iota // 2024-11-05, 2025-03-26: no title, outputSchema, icons, execution
	shapeMid                   // 2025-06-18: + title, outputSchema, _meta
	shapeFull                  // 2025-11-25, 2026-07-28: everything
)

func shapeFor(version string) toolShape {
	switch {
	case atLeast(version, V20251125):
		return shapeFull
	case atLeast(version, V20250618):
		return shapeMid
	case version == "":
		return shapeFull
	}
	return shapeOld
}

func encodeTool(t *abi.Tool, sh toolShape) []byte {
	v := *t
	if sh < shapeFull {
		v.Icons, v.Execution = nil, nil
	}
	if sh < shapeMid {
		v.Title, v.OutputSchema, v.Meta = "", nil, nil
	}
	if v.Execution != nil && v.Execution.TaskSupport == abi.TaskForbidden {
		v.Execution = nil
	}
	b, _ := json.Marshal(&v)
	return b
}

// ModuleOf names the module that serves a request (tools/call,
// resources/read, prompts/get, completion/complete), or "" when the host
// answers it itself or the request names nothing the catalog has. A
// transport uses it to give each module its own admission, so that one
// module's flood of slow calls does not hold another's.
func (s *Server) ModuleOf(msg *Message) string {
	var mod Module
	c := s.cat.Load()
	if c == nil || msg == nil {
		return ""
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
		Ref  *struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
	}
	switch msg.Method {
	case "tools/call", "resources/read", "prompts/get", "completion/complete":
		if sonic.Unmarshal(msg.Params, &p) != nil {
			return ""
		}
	default:
		return ""
	}
	switch msg.Method {
	case "tools/call":
		if e, ok := c.toolIdx[p.Name]; ok {
			mod = e.mod
		}
	case "prompts/get":
		if e, ok := c.promptIdx[p.Name]; ok {
			mod = e.mod
		}
	case "resources/read":
		if e, ok := c.resIdx[p.URI]; ok {
			mod = e.mod
		} else {
			if t := c.templateFor(p.URI); t != nil {
				mod = t.mod
			}
		}
	case "completion/complete":
		if p.Ref != nil {
			key := "prompt\x00" + p.Ref.Name
			if p.Ref.Type == "ref/resource" {
				key = "template\x00" + p.Ref.URI
			}
			mod = c.complete[key]
		}
	}
	if mod == nil {
		return ""
	}
	return mod.Name()
}

// Instructions combines the operator's instructions (first, as given) with
// the modules' own (each under a "## <module>" heading, in module order),
// separated by blank lines; "" when there are none.
func (c *Catalog) Instructions(operator string) string {
	operator = strings.TrimSpace(operator)
	switch {
	case c.instructions == "":
		return operator
	case operator == "":
		return c.instructions
	}
	return operator + "\n\n" + c.instructions
}
