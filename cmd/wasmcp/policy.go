package main

import "github.com/wasmcp/wasmcp/host"

// policyJSON renders an effective policy for inspect.
func policyJSON(p host.Policy) map[string]any {
	return map[string]any{
		"memory":        host.FormatBytes(int64(p.Limits.MemoryBytes)),
		"timeout":       p.Limits.Timeout.String(),
		"maxOutput":     host.FormatBytes(p.Limits.OutputBytes),
		"maxLine":       host.FormatBytes(int64(p.Limits.LineBytes)),
		"maxInstances":  p.MaxInstances,
		"maxQueue":      p.MaxQueue,
		"mounts":        p.Mounts,
		"env":           envNames(p.Env),
		"discardStderr": p.DiscardStderr,
	}
}

func envNames(env []host.EnvVar) []string {
	names := make([]string, 0, len(env))
	for _, e := range env {
		names = append(names, e.Name)
	}
	return names
}
