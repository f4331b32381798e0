package main

import (
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/egress"
)

// policyJSON renders an effective policy for inspect, with the keys of the
// policy file (docs/policy.md) and every default filled in. Environment
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
		"max_queue":     p.QueueSetting(), // applies once max_instances caps

		"stderr": stderr,
		"mount":  mountsJSON(p.Mounts),
		"env":    envJSON(p.Env),
	}
	if p.HTTP != nil {
		out["http"] = httpJSON(p.HTTP)
	}
	if p.Mode != host.ModeAuto {
		// Set by the policy; the module's mode is inspect's "mode".
		out["mode"] = string(p.Mode)
	}
	return out
}

// httpJSON renders the outbound HTTP grant: the allow-list, the special
// networks, the limits, and for each secret header its name and source,
// never its value.
func httpJSON(h *egress.Policy) map[string]any {
	l := h.Limits.WithDefaults()
	allow := make([]map[string]any, 0, len(h.Allow))
	for i := range h.Allow {
		r := &h.Allow[i]
		entry := map[string]any{"rule": r.String()}
		if len(r.Headers) > 0 {
			hs := make(map[string]string, len(r.Headers))
			for _, sh := range r.Headers {
				hs[sh.Name] = sh.Source
			}
			entry["headers"] = hs
		}
		if r.FollowRedirects {
			entry["follow_redirects"] = true
		}
		allow = append(allow, entry)
	}
	nets := make([]string, len(h.Networks))
	for i, n := range h.Networks {
		nets[i] = n.String()
	}
	out := map[string]any{
		"allow":         allow,
		"networks":      nets,
		"max_requests":  l.Requests,
		"max_bytes_out": host.FormatBytes(l.BytesOut),
		"max_bytes_in":  host.FormatBytes(l.BytesIn),
		"timeout":       l.Timeout.String(),
		"concurrency":   l.Concurrency,
	}
	if h.CABundleFile != "" {
		out["ca_bundle"] = h.CABundleFile
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
