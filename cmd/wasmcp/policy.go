package main

import "github.com/wasmcp/wasmcp/host"

// policyJSON renders an effective policy for inspect, with the keys of the
// policy file (README "Policy") and every default filled in. Environment
// values are never shown, only names and where each value comes from.
func policyJSON(p host.Policy) map[string]any {
	stderr := "log"
	if p.DiscardStderr {
		stderr = "discard"
	}
	out := map[string]any{
		"memory":        host.FormatBytes(int64(p.Limits.MemoryBytes)),
		"timeout":       p.Limits.Timeout.String(),
		"max_output":    host.FormatBytes(p.Limits.OutputBytes),
		"max_line":      host.FormatBytes(int64(p.Limits.LineBytes)),
		"max_instances": p.MaxInstances,
		"max_queue":     p.QueueBound(),
		"stderr":        stderr,
		"mount":         mountsJSON(p.Mounts),
		"env":           envJSON(p.Env),
	}
	return out
}

func mountsJSON(ms []host.Mount) []map[string]string {
	out := make([]map[string]string, 0, len(ms))
	for _, m := range ms {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		out = append(out, map[string]string{"host": m.HostPath, "guest": m.GuestPath, "mode": mode})
	}
	return out
}

// envJSON maps each variable to its source: "literal" or "from HOST_VAR".
func envJSON(env []host.EnvVar) map[string]string {
	out := make(map[string]string, len(env))
	for _, e := range env {
		if e.From != "" {
			out[e.Name] = "from " + e.From
		} else {
			out[e.Name] = "literal"
		}
	}
	return out
}
