package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"

	"github.com/wasmcp/wasmcp/registry"
)

func cmdInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	var ef engineFlags
	ef.register(fs)
	if err := parseFlags(fs, args, stdout, stderr, `Usage: wasmcp inspect [flags] MODULE.wasm

Loads a module as 'wasmcp serve' would (with the policy file beside it) and
prints its description — tools, resources, templates, prompts, skills
(with digests and sizes) — and its effective policy as JSON.

Flags:
`); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	engine, m, err := ef.loadModule(ctx, fs.Arg(0), io.Discard)
	if err != nil {
		return err
	}
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
		"policyFile":  policyFileIfExists(fs.Arg(0)),
		"policy":      policyJSON(pol),
		"description": &desc,
	}
	if len(skillsOut) > 0 {
		out["skills"] = skillsOut
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func policyFileIfExists(wasm string) string {
	p := registry.PolicyFile(wasm)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}
