package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/wasmcp/wasmcp/registry"
)

func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	var ef engineFlags
	ef.register(fs)
	if err := parseFlags(fs, args, stdout, stderr, `Usage: wasmcp inspect [flags] MODULE.wasm

Loads a module as 'wasmcp serve' would (with the policy file beside it) and
prints its description — tools, resources, templates, prompts, skills
(with digests and sizes) — its mode (a wasmcp guest, or an MCP server and
the revision the host speaks to it) and its effective policy as JSON.

Flags:
`); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	execBefore, measured := executableBytes()
	engine, m, err := ef.loadModule(ctx, fs.Arg(0), io.Discard)
	if err != nil {
		return err
	}
	execAfter, _ := executableBytes()
	defer engine.Close(context.Background())
	pol := m.Policy()
	// Skills are shown as the host serves them (digests and sizes), not
	// with their files' contents.
	desc := *m.Description()
	desc.Skills = nil
	type skillFile struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	}
	var skillsOut []map[string]any
	for _, sk := range m.Skills() {
		files := make([]skillFile, len(sk.Files))
		for i, f := range sk.Files {
			files[i] = skillFile{f.URI, f.Digest, len(f.Data)}
		}
		skillsOut = append(skillsOut, map[string]any{"uri": sk.URI(), "frontmatter": sk.Frontmatter, "files": files})
	}
	out := map[string]any{
		"module":      m.Name(),
		"sha256":      m.Hash(),
		"shape":       map[bool]string{true: "reactor", false: "command"}[m.Reactor()],
		"mode":        m.Mode(),
		"policyFile":  policyFileIfExists(fs.Arg(0)),
		"policy":      policyJSON(pol),
		"description": &desc,
	}
	if v := m.MCPVersion(); v != "" {
		// An MCP server: the revision the host speaks to it.
		out["mcpProtocolVersion"] = v
	}
	if len(skillsOut) > 0 {
		out["skills"] = skillsOut
	}
	// Whether calls start from a snapshot of the module's start-up (a
	// reactor that exports wasmcp_snapshot), and why not when it asked.
	snap := map[string]any{"used": false}
	if used, reason := m.Snapshot(); used {
		snap["used"] = true
	} else if reason != "" {
		snap["reason"] = reason
	}
	out["snapshot"] = snap
	// What the module keeps in memory while serving: the code as the
	// --code-memory budget counts it, and, where the process's mappings
	// can be read, the machine code wazero mapped for it.
	fp := m.Footprint()
	mem := map[string]any{"codeBudgeted": fp.Code, "descriptionJSON": fp.Description, "snapshotImage": fp.Snapshot}
	if st, err := os.Stat(fs.Arg(0)); err == nil {
		mem["wasm"] = st.Size()
	}
	if measured {
		mem["machineCode"] = execAfter - execBefore
	}
	out["memory"] = mem
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// executableBytes sums the process's anonymous executable mappings (where
// wazero puts machine code); ok is false where /proc/self/maps cannot be
// read.
func executableBytes() (n int64, ok bool) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || len(f) > 5 || !strings.Contains(f[1], "x") {
			continue // a file-backed mapping has a sixth field
		}
		lo, hi, found := strings.Cut(f[0], "-")
		if !found {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		z, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil {
			n += int64(z - a)
		}
	}
	return n, true
}

func policyFileIfExists(wasm string) string {
	p := registry.PolicyFile(wasm)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}
