package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/wasmcp/wasmcp/host"
)

// PolicyFile is the path of the policy file beside a module file:
// NAME.wasm (or a script, NAME.js or NAME.ts) → NAME.policy.toml.
func PolicyFile(wasmPath string) string {
	if IsScript(wasmPath) {
		return strings.TrimSuffix(wasmPath, filepath.Ext(wasmPath)) + ".policy.toml"
	}
	return strings.TrimSuffix(wasmPath, ".wasm") + ".policy.toml"
}

// LoadPolicy reads the policy beside a module; a module without one gets
// the zero policy (the engine's defaults, nothing granted). Environment
// values with `from` are read from the host's environment now.
func LoadPolicy(wasmPath string) (host.Policy, error) {
	file := PolicyFile(wasmPath)
	data, err := readPolicyFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return host.Policy{}, nil
	}
	if err != nil {
		return host.Policy{}, fmt.Errorf("policy %s: %w", file, err)
	}
	p, err := ParsePolicy(data, filepath.Dir(file), os.LookupEnv)
	if err != nil {
		return host.Policy{}, fmt.Errorf("policy %s: %w", file, err)
	}
	return p, nil
}

// policyFile is the TOML shape of a policy file. Every key is optional.
type policyFile struct {
	Memory       *byteSize           `toml:"memory"`
	Timeout      *duration           `toml:"timeout"`
	MaxOutput    *byteSize           `toml:"max_output"`
	MaxLine      *byteSize           `toml:"max_line"`
	TableElems   *int64              `toml:"table_elements"`
	MaxFunctions *int64              `toml:"max_functions"`
	MaxTypes     *int64              `toml:"max_types"`
	MaxImports   *int64              `toml:"max_imports"`
	MaxLocals    *int64              `toml:"max_locals"`
	MaxCode      *byteSize           `toml:"max_code"`
	MaxDataSegs  *int64              `toml:"max_data_segments"`
	MaxData      *byteSize           `toml:"max_data"`
	MaxElemSegs  *int64              `toml:"max_elem_segments"`
	MaxInstances *int                `toml:"max_instances"`
	MaxQueue     *int                `toml:"max_queue"`
	Stderr       *string             `toml:"stderr"`
	Mode         *string             `toml:"mode"`
	Snapshot     *bool               `toml:"snapshot"`
	SnapMaxMem   *byteSize           `toml:"snapshot_max_memory"`
	Mounts       []mountEntry        `toml:"mount"`
	Env          map[string]envEntry `toml:"env"`
	HTTP         *httpSection        `toml:"http"`
	Access       *accessTable        `toml:"access"`
}

// accessTable is [access]: the module's grant, per-item grants in
// [access.tools.NAME], [access.resources."URI"], [access.prompts.NAME],
// and expose_principal.
type accessTable struct {
	Scopes          []string              `toml:"scopes"`
	Principals      []string              `toml:"principals"`
	ExposePrincipal bool                  `toml:"expose_principal"`
	Tools           map[string]grantEntry `toml:"tools"`
	Resources       map[string]grantEntry `toml:"resources"`
	Prompts         map[string]grantEntry `toml:"prompts"`
}

type grantEntry struct {
	Scopes     []string `toml:"scopes"`
	Principals []string `toml:"principals"`
}

func (a *accessTable) access() (host.Access, error) {
	out := host.Access{Grant: host.Grant{Scopes: a.Scopes, Principals: a.Principals}, ExposePrincipal: a.ExposePrincipal}
	conv := func(kind string, in map[string]grantEntry) (map[string]host.Grant, error) {
		if len(in) == 0 {
			return nil, nil
		}
		m := make(map[string]host.Grant, len(in))
		for name, g := range in {
			if len(g.Scopes) == 0 && len(g.Principals) == 0 {
				return nil, fmt.Errorf("access.%s.%q: name scopes or principals (an empty grant would open the item to everyone)", kind, name)
			}
			m[name] = host.Grant{Scopes: g.Scopes, Principals: g.Principals}
		}
		return m, nil
	}
	var err error
	if out.Tools, err = conv("tools", a.Tools); err != nil {
		return out, err
	}
	if out.Resources, err = conv("resources", a.Resources); err != nil {
		return out, err
	}
	if out.Prompts, err = conv("prompts", a.Prompts); err != nil {
		return out, err
	}
	return out, nil
}

type mountEntry struct {
	Host          string    `toml:"host"`
	Guest         string    `toml:"guest"`
	Mode          string    `toml:"mode"`
	MaxWriteBytes *byteSize `toml:"max_write_bytes"`
	MaxDiskBytes  *byteSize `toml:"max_disk_bytes"`
}

// ParsePolicy decodes a policy file. dir is the directory relative host
// paths resolve against (the policy file's own); lookup reads the host's
// environment (os.LookupEnv in production). Unknown keys are an error.
func ParsePolicy(data []byte, dir string, lookup func(string) (string, bool)) (host.Policy, error) {
	var f policyFile
	md, err := toml.NewDecoder(strings.NewReader(string(data))).Decode(&f)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			if pe.LastKey != "" {
				return host.Policy{}, fmt.Errorf("line %d, key %s: %s", pe.Position.Line, pe.LastKey, pe.Message)
			}
			return host.Policy{}, fmt.Errorf("line %d: %s", pe.Position.Line, pe.Message)
		}
		return host.Policy{}, errors.New(strings.TrimPrefix(err.Error(), "toml: "))
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = strconv.Quote(k.String())
		}
		return host.Policy{}, fmt.Errorf("unknown key %s (known keys: memory, timeout, max_output, max_line, table_elements, max_functions, max_types, max_imports, max_locals, max_code, max_data_segments, max_data, max_elem_segments, max_instances, max_queue, stderr, mode, snapshot, snapshot_max_memory, [[mount]] host/guest/mode/max_write_bytes/max_disk_bytes, [env], [http] with [[http.allow]], [access] scopes/principals/expose_principal/tools/resources/prompts)",
			strings.Join(keys, ", "))
	}
	return f.policy(dir, lookup)
}

// maxTableElements is the largest table_elements: 512 MiB of host memory
// at 8 bytes an element.
const maxTableElements = 64 << 20

// maxStructure are the largest structural caps a policy may set: the
// limits browsers' engines publish (V8's wasm-limits.h), past which no
// engine on the web compiles a module either.
var maxStructure = struct{ Functions, Types, Imports, Locals, CodeBytes, DataSegments, DataBytes, ElemSegments int64 }{
	Functions: 1_000_000, Types: 1_000_000, Imports: 100_000, Locals: 50_000,
	CodeBytes: 1 << 30, DataSegments: 100_000, DataBytes: 1 << 30, ElemSegments: 10_000_000,
}

// maxMemory is the largest memory a wasm32 instance can have.
const maxMemory = 4 << 30

// policy converts the decoded file into a host.Policy, checking every
// value: the limits, the concurrency caps, the output and mode switches,
// access, mounts, environment and HTTP, in that order.
func (f *policyFile) policy(dir string, lookup func(string) (string, bool)) (host.Policy, error) {
	var p host.Policy
	for _, step := range []func(*host.Policy) error{
		f.limits,
		f.structure,
		f.concurrency,
		f.switches,
		f.access,
		func(p *host.Policy) error { return f.mounts(p, dir) },
		func(p *host.Policy) error { return f.env(p, lookup) },
		func(p *host.Policy) error { return f.http(p, dir, lookup) },
	} {
		if err := step(&p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// limits checks memory, timeout, max_output, max_line and table_elements
// into p.Limits.
func (f *policyFile) limits(p *host.Policy) error {
	if f.Memory != nil {
		n := int64(*f.Memory)
		if n < 64<<10 || n > maxMemory {
			return fmt.Errorf("memory = %s: want between 64KiB and 4GiB", host.FormatBytes(n))
		}
		if n%(64<<10) != 0 {
			return fmt.Errorf("memory = %s: want a multiple of 64KiB (one wasm page)", host.FormatBytes(n))
		}
		p.Limits.MemoryBytes = uint64(n)
	}
	if f.Timeout != nil {
		if *f.Timeout <= 0 {
			return errors.New("timeout must be positive")
		}
		p.Limits.Timeout = time.Duration(*f.Timeout)
	}
	if f.MaxOutput != nil {
		if *f.MaxOutput <= 0 {
			return errors.New("max_output must be positive")
		}
		p.Limits.OutputBytes = int64(*f.MaxOutput)
	}
	if f.MaxLine != nil {
		if *f.MaxLine <= 0 || *f.MaxLine > 1<<30 {
			return errors.New("max_line must be between 1B and 1GiB")
		}
		p.Limits.LineBytes = int(*f.MaxLine)
	}
	if f.TableElems != nil {
		if *f.TableElems <= 0 || *f.TableElems > maxTableElements {
			return fmt.Errorf("table_elements must be between 1 and %d", maxTableElements)
		}
		p.Limits.TableElements = uint64(*f.TableElems)
	}
	return nil
}

// structure checks the structural caps (max_functions … max_elem_segments)
// against maxStructure into p.Limits.Structure.
func (f *policyFile) structure(p *host.Policy) error {
	st := &p.Limits.Structure
	for _, c := range []struct {
		key string
		v   *int64
		to  *uint32
		max int64
	}{
		{"max_functions", f.MaxFunctions, &st.Functions, maxStructure.Functions},
		{"max_types", f.MaxTypes, &st.Types, maxStructure.Types},
		{"max_imports", f.MaxImports, &st.Imports, maxStructure.Imports},
		{"max_locals", f.MaxLocals, &st.Locals, maxStructure.Locals},
		{"max_code", (*int64)(f.MaxCode), &st.CodeBytes, maxStructure.CodeBytes},
		{"max_data_segments", f.MaxDataSegs, &st.DataSegments, maxStructure.DataSegments},
		{"max_data", (*int64)(f.MaxData), &st.DataBytes, maxStructure.DataBytes},
		{"max_elem_segments", f.MaxElemSegs, &st.ElemSegments, maxStructure.ElemSegments},
	} {
		if c.v == nil {
			continue
		}
		if *c.v <= 0 || *c.v > c.max {
			return fmt.Errorf("%s must be between 1 and %d", c.key, c.max)
		}
		*c.to = uint32(*c.v)
	}
	return nil
}

// concurrency checks max_instances and max_queue (which needs the former).
func (f *policyFile) concurrency(p *host.Policy) error {
	if f.MaxInstances != nil {
		if *f.MaxInstances < 0 {
			return errors.New("max_instances must not be negative (0 is no cap)")
		}
		p.MaxInstances = *f.MaxInstances
	}
	if f.MaxQueue != nil {
		switch {
		case *f.MaxQueue < 0:
			return errors.New("max_queue must not be negative")
		case p.MaxInstances == 0:
			return errors.New("max_queue needs max_instances: without a cap on instances no call ever queues")
		case *f.MaxQueue == 0:
			p.MaxQueue = host.NoQueue
		default:
			p.MaxQueue = *f.MaxQueue
		}
	}
	return nil
}

// switches checks stderr, mode, snapshot and snapshot_max_memory.
func (f *policyFile) switches(p *host.Policy) error {
	if f.Stderr != nil {
		switch *f.Stderr {
		case "log":
		case "discard":
			p.DiscardStderr = true
		default:
			return fmt.Errorf(`stderr = %q: want "log" or "discard"`, *f.Stderr)
		}
	}
	if f.Mode != nil {
		switch m := host.Mode(*f.Mode); m {
		case "auto":
			p.Mode = host.ModeAuto
		case host.ModeABI, host.ModeMCPServer:
			p.Mode = m
		default:
			return fmt.Errorf(`mode = %q: want "auto", "wasmcp" or "mcp-server"`, *f.Mode)
		}
	}
	if f.Snapshot != nil {
		p.NoSnapshot = !*f.Snapshot
	}
	if f.SnapMaxMem != nil {
		if *f.SnapMaxMem <= 0 {
			return errors.New("snapshot_max_memory must be positive (snapshot = false turns snapshots off)")
		}
		p.SnapshotMaxMemory = int64(*f.SnapMaxMem)
	}
	return nil
}

// access converts [access] into p.Access.
func (f *policyFile) access(p *host.Policy) error {
	if f.Access == nil {
		return nil
	}
	a, err := f.Access.access()
	if err != nil {
		return err
	}
	p.Access = a
	return nil
}

// mounts checks every [[mount]] (host relative to dir, an existing
// directory; guest absolute and mounted once) into p.Mounts.
func (f *policyFile) mounts(p *host.Policy, dir string) error {
	guests := map[string]bool{}
	for i, m := range f.Mounts {
		mnt, err := m.mount(fmt.Sprintf("mount %d", i+1), dir, guests)
		if err != nil {
			return err
		}
		p.Mounts = append(p.Mounts, mnt)
	}
	return nil
}

// mount checks one [[mount]], named where in errors; guests holds the
// guest paths already mounted and gains this one.
func (m mountEntry) mount(where, dir string, guests map[string]bool) (host.Mount, error) {
	if m.Host == "" {
		return host.Mount{}, fmt.Errorf("%s: host is required", where)
	}
	if m.Guest == "" || !path.IsAbs(m.Guest) {
		return host.Mount{}, fmt.Errorf("%s: guest = %q must be an absolute path", where, m.Guest)
	}
	g := path.Clean(m.Guest)
	if guests[g] {
		return host.Mount{}, fmt.Errorf("%s: guest path %s is mounted twice", where, g)
	}
	guests[g] = true
	hp := m.Host
	if !filepath.IsAbs(hp) {
		hp = filepath.Join(dir, hp)
	}
	hp = filepath.Clean(hp)
	st, err := os.Stat(hp)
	if err != nil {
		return host.Mount{}, fmt.Errorf("%s: host %s: %w", where, hp, err)
	}
	if !st.IsDir() {
		return host.Mount{}, fmt.Errorf("%s: host %s is not a directory", where, hp)
	}
	var ro bool
	switch m.Mode {
	case "", "ro":
		ro = true
	case "rw":
	default:
		return host.Mount{}, fmt.Errorf(`%s: mode = %q: want "ro" or "rw"`, where, m.Mode)
	}
	mnt := host.Mount{HostPath: hp, GuestPath: g, ReadOnly: ro}
	if m.MaxWriteBytes != nil {
		if ro {
			return host.Mount{}, fmt.Errorf(`%s: max_write_bytes is for a read-write mount (mode = "rw")`, where)
		}
		if *m.MaxWriteBytes == 0 {
			return host.Mount{}, fmt.Errorf("%s: max_write_bytes = 0: a read-write mount nothing may be written to is a read-only mount (mode = \"ro\")", where)
		}
		mnt.MaxWriteBytes = int64(*m.MaxWriteBytes)
	}
	if m.MaxDiskBytes != nil {
		if ro {
			return host.Mount{}, fmt.Errorf(`%s: max_disk_bytes is for a read-write mount (mode = "rw")`, where)
		}
		if *m.MaxDiskBytes == 0 {
			return host.Mount{}, fmt.Errorf("%s: max_disk_bytes = 0: a read-write mount that may keep nothing is a read-only mount (mode = \"ro\")", where)
		}
		mnt.MaxDiskBytes = int64(*m.MaxDiskBytes)
	}
	return mnt, nil
}

// env checks [env] in name order (names, NUL bytes; `from` read through
// lookup now) into p.Env.
func (f *policyFile) env(p *host.Policy, lookup func(string) (string, bool)) error {
	names := make([]string, 0, len(f.Env))
	for name := range f.Env {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		e := f.Env[name]
		if !envName.MatchString(name) {
			return fmt.Errorf("env %q: a name is letters, digits and _, not starting with a digit", name)
		}
		v := host.EnvVar{Name: name, Value: e.value, From: e.from}
		if e.from != "" {
			val, ok := lookup(e.from)
			if !ok {
				return fmt.Errorf("env %s: host variable %s is not set", name, e.from)
			}
			v.Value = val
		}
		if strings.IndexByte(v.Value, 0) >= 0 {
			return fmt.Errorf("env %s: value contains a NUL byte", name)
		}
		p.Env = append(p.Env, v)
	}
	return nil
}

// http converts [http] into p.HTTP.
func (f *policyFile) http(p *host.Policy, dir string, lookup func(string) (string, bool)) error {
	if f.HTTP == nil {
		return nil
	}
	hp, err := f.HTTP.policy(dir, lookup)
	if err != nil {
		return err
	}
	p.HTTP = hp
	return nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envEntry is one [env] value: a string (the literal value) or a table
// {from = "HOST_VAR"}.
type envEntry struct {
	value string
	from  string
}

// UnmarshalTOML implements toml.Unmarshaler.
func (e *envEntry) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		e.value = v
		return nil
	case map[string]any:
		for k, x := range v {
			if k != "from" {
				return fmt.Errorf("unknown key %q in an env table (want {from = \"HOST_VAR\"})", k)
			}
			s, ok := x.(string)
			if !ok || !envName.MatchString(s) {
				return fmt.Errorf("from = %v: want the name of a host environment variable", x)
			}
			e.from = s
		}
		if e.from == "" {
			return errors.New(`an env table needs from = "HOST_VAR"`)
		}
		return nil
	}
	return fmt.Errorf("env value %v: want a string or {from = \"HOST_VAR\"}", v)
}

// byteSize is a byte count written as an integer (bytes) or a string with a
// binary unit: "512KiB", "64MiB", "1GiB" (also "B").
type byteSize int64

// UnmarshalTOML implements toml.Unmarshaler.
func (b *byteSize) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return fmt.Errorf("size %d must not be negative", v)
		}
		*b = byteSize(v)
		return nil
	case string:
		n, err := ParseSize(v)
		if err != nil {
			return err
		}
		*b = byteSize(n)
		return nil
	}
	return fmt.Errorf("size %v: want an integer (bytes) or a string such as \"64MiB\"", v)
}

// ParseSize parses a byte count: digits followed by B, KiB, MiB or GiB
// (case-sensitive; no decimal units, so no ambiguity about 1000 vs 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want digits and a unit (B, KiB, MiB, GiB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	var shift uint
	switch strings.TrimSpace(t[i:]) {
	case "", "B":
	case "KiB":
		shift = 10
	case "MiB":
		shift = 20
	case "GiB":
		shift = 30
	default:
		return 0, fmt.Errorf("size %q: unit must be B, KiB, MiB or GiB", s)
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n << shift, nil
}

// duration is a Go duration string: "500ms", "10s", "2m".
type duration time.Duration

// UnmarshalTOML implements toml.Unmarshaler.
func (d *duration) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("duration %v: want a string such as \"10s\" or \"500ms\"", v)
	}
	x, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = duration(x)
	return nil
}
