package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/registry"
)

// grantTables are the policy tables that grant something (or say who may
// call): a version being described is not approved yet, so none applies.
var grantTables = []string{"mount", "env", "http", "access"}

// PulledNames is the pull.Describer of wasmcp pull and serve's pulled
// tools: it opens a version's module on e as the registry opens a module —
// compiled, its describe run under e's describe deadline and load ceiling
// — and closes it. The version is not approved yet, so its policy applies
// without its grants (no mount, environment variable, outbound HTTP or
// access table: nothing reaches the guest) and with limits no higher than
// e's (a hostile module cannot raise the memory its describe may take).
func PulledNames(e *host.Engine) pull.Describer {
	return func(ctx context.Context, name string, module, policy []byte) ([]string, error) {
		pol, err := describePolicy(policy, e.Limits())
		if err != nil {
			return nil, err
		}
		var m *host.Module
		for try := 1; ; try++ {
			m, err = e.Open(ctx, name, module, "", pol, func() ([]byte, error) { return module, nil })
			if err == nil || !host.Transient(err) || try == describeTries {
				break
			}
			// The machine, not the guest, was slow (the wall-clock ceiling
			// cut a run under its own deadline): taken again.
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("describe: %w", err)
			case <-time.After(time.Duration(try) * time.Second):
			}
		}
		if err != nil {
			return nil, fmt.Errorf("describe: %w", err)
		}
		defer m.Close(context.Background())
		return NameLines(m.Description()), nil
	}
}

// describeTries is how often PulledNames runs a describe that a busy
// machine cut (host.Transient) before giving up.
const describeTries = 3

// describePolicy is the policy a pulled version is described under: its
// own without grantTables, limits capped at max.
func describePolicy(policy []byte, max host.Limits) (host.Policy, error) {
	if len(policy) == 0 {
		return host.Policy{}, nil
	}
	var m map[string]any
	if _, err := toml.Decode(string(policy), &m); err != nil {
		return host.Policy{}, fmt.Errorf("policy: %w", err)
	}
	for _, k := range grantTables {
		delete(m, k)
	}
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(m); err != nil {
		return host.Policy{}, fmt.Errorf("policy: %w", err)
	}
	pol, err := registry.ParsePolicy([]byte(b.String()), ".", func(string) (string, bool) { return "", false })
	if err != nil {
		return host.Policy{}, fmt.Errorf("policy: %w", err)
	}
	pol.Limits = capLimits(pol.Limits, max.WithDefaults(host.DefaultLimits()))
	return pol, nil
}

// capLimits is l with every limit above max's (or unset) set to max's.
func capLimits(l, max host.Limits) host.Limits {
	l = l.WithDefaults(max)
	l.MemoryBytes = min(l.MemoryBytes, max.MemoryBytes)
	l.Timeout = min(l.Timeout, max.Timeout)
	l.OutputBytes = min(l.OutputBytes, max.OutputBytes)
	l.LineBytes = min(l.LineBytes, max.LineBytes)
	l.TableElements = min(l.TableElements, max.TableElements)
	s, d := &l.Structure, max.Structure
	for _, f := range []struct {
		v *uint32
		d uint32
	}{
		{&s.Functions, d.Functions}, {&s.Types, d.Types}, {&s.Imports, d.Imports}, {&s.Locals, d.Locals},
		{&s.CodeBytes, d.CodeBytes}, {&s.DataSegments, d.DataSegments}, {&s.DataBytes, d.DataBytes}, {&s.ElemSegments, d.ElemSegments},
	} {
		*f.v = min(*f.v, f.d)
	}
	return l
}

// NameLines is the names a description declares, as pull records them.
func NameLines(d *abi.Description) []string {
	if d == nil {
		return []string{}
	}
	var tools, res, tmpl, prompts []string
	for _, t := range d.Tools {
		tools = append(tools, t.Name)
	}
	for _, r := range d.Resources {
		res = append(res, r.URI)
	}
	for _, r := range d.ResourceTemplates {
		tmpl = append(tmpl, r.URITemplate)
	}
	for _, p := range d.Prompts {
		prompts = append(prompts, p.Name)
	}
	return pull.NameLines(tools, res, tmpl, prompts)
}

// DirNames lists the names the modules of the tools directory dir declare
// (.wasm modules and scripts; not NAME.wasm, skip's own), each with its
// file: every module is opened on e as serve opens it, with the policy
// beside it (its description from the cache when there), then closed. A module that does not load (serve refuses it
// too) is handed to skipped and left out. A missing dir declares nothing.
func DirNames(ctx context.Context, e *host.Engine, dir, skip string, skipped func(file string, err error)) (map[string]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tools directory: %w", err)
	}
	var files []string
	for _, ent := range ents {
		n := ent.Name()
		if strings.HasPrefix(n, ".") || n == skip+".wasm" || !(strings.HasSuffix(n, ".wasm") || registry.IsScript(n)) || registry.ModuleName(n) == "" {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
			files = append(files, filepath.Join(dir, n))
		}
	}
	sort.Strings(files)
	out := map[string]string{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := registry.DescribeFile(ctx, e, f)
		if err != nil {
			skipped(f, err)
			continue
		}
		for _, n := range NameLines(d) {
			if _, ok := out[n]; !ok {
				out[n] = f
			}
		}
	}
	return out, nil
}

// servedNamesCheck is the registry's check of a pulled module in the tools
// directory dir (registry.SetPulledCheck): it may serve only the names the
// operator approved, the lock's names for its entry. Pull and approve list
// the names a version declares described without its grants; a module
// that declares others once it runs with them (its environment, a mounted
// file) is refused, whatever the names, so no name reaches clients that
// no one approved. An entry without names (a lock written before names
// were recorded) is left to the syncer's first sight; a module with a
// pull marker and no entry in the lock is held to nothing here.
func servedNamesCheck(dir string) func(string, *abi.Description) error {
	return func(module string, d *abi.Description) error {
		l, err := pull.ReadLock(dir)
		if err != nil {
			return fmt.Errorf("pulled module: the lock, which says which names were approved: %w", err)
		}
		t := l.Find(module)
		if t == nil || t.Names == nil {
			return nil
		}
		extra := pull.NewNames(NameLines(d), t.Names)
		if len(extra) == 0 {
			return nil
		}
		for i, n := range extra {
			extra[i] = pull.Printable(n)
		}
		return fmt.Errorf("pulled module declares %s, which no one approved: pull and approve saw its names described without its grants, and under them it declares more; a module's names must not depend on what it is granted", strings.Join(extra, ", "))
	}
}
