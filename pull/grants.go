package pull

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Grants lists what a policy file asks for, one canonical line per grant:
// every limit it sets ("memory = \"64MiB\""), every mount, environment
// variable, outbound HTTP rule (with its secret headers) and setting, and
// its access table. A policy that sets nothing asks for nothing (the
// server's defaults). Two policies asking for the same thing give the
// same lines, so approval is set inclusion.
func Grants(policy []byte) ([]string, error) {
	if len(policy) == 0 {
		return []string{}, nil
	}
	var m map[string]any
	if _, err := toml.Decode(string(policy), &m); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if err := lowercaseKeys("", m); err != nil {
		return nil, err
	}
	var out []string
	for k, v := range m {
		switch k {
		case "mount":
			for _, e := range asList(v) {
				out = append(out, "mount "+canon(e))
			}
		case "env":
			if t, ok := v.(map[string]any); ok {
				for name, val := range t {
					out = append(out, "env "+name+" = "+canon(val))
				}
			} else {
				out = append(out, "env = "+canon(v))
			}
		case "http":
			t, ok := v.(map[string]any)
			if !ok {
				out = append(out, "http = "+canon(v))
				continue
			}
			for hk, hv := range t {
				if hk == "allow" {
					for _, e := range asList(hv) {
						out = append(out, "http.allow "+canon(e))
					}
					continue
				}
				out = append(out, "http."+hk+" = "+canon(hv))
			}
		default:
			out = append(out, k+" = "+canon(v))
		}
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// nameTables are the policy tables whose keys are names (environment
// variables, header names, tool, resource and prompt names), not fields.
var nameTables = map[string]bool{"env": true, "http.allow.headers": true,
	"access.tools": true, "access.resources": true, "access.prompts": true}

// lowercaseKeys refuses a structural key of a policy (one the policy
// reader matches to a field) that is not lowercase: the reader matches
// keys case-insensitively, so `MOUNT` is a mount, while the lines here,
// by their spelling, would file it as a limit. Keys of name tables keep
// their case; what is under a name is structural again.
func lowercaseKeys(path string, v any) error {
	for _, t := range tablesOf(v) {
		for k, sub := range t {
			var p string
			switch {
			case nameTables[path]:
				p = path + ".*"
			case k != strings.ToLower(k):
				return fmt.Errorf("policy: key %q is not lowercase (the server would read it as %q): write it %q",
					strings.TrimPrefix(path+"."+k, "."), strings.ToLower(k), strings.ToLower(k))
			default:
				p = strings.TrimPrefix(path+"."+k, ".")
			}
			if err := lowercaseKeys(p, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// tablesOf is v as tables: a table, or the tables of an array.
func tablesOf(v any) []map[string]any {
	switch l := v.(type) {
	case map[string]any:
		return []map[string]any{l}
	case []map[string]any:
		return l
	case []any:
		var out []map[string]any
		for _, e := range l {
			if t, ok := e.(map[string]any); ok {
				out = append(out, t)
			}
		}
		return out
	}
	return nil
}

func asList(v any) []any {
	switch l := v.(type) {
	case []map[string]any:
		out := make([]any, len(l))
		for i := range l {
			out[i] = l[i]
		}
		return out
	case []any:
		return l
	}
	return []any{v}
}

// canon is v as JSON with sorted keys (encoding/json sorts map keys).
func canon(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Beyond returns what asked asks for beyond approved, comparing what the
// server will enforce in both directions: every line of asked that is not
// approved, and, for every approved line that restricts and that asked
// drops, that line prefixed with DropPrefix. Only a grant — a mount, an
// environment variable, an outbound HTTP rule — asks for less when it is
// dropped. Every other line sets a limit or a restriction (memory,
// timeout, max_instances, an http setting, the access table with its
// scopes and per-item principals): dropping it puts the server's default
// in its place — no access table lets every caller in, and a limit set
// below the default rises to it — and the defaults are serve's flags,
// which a pull cannot know. A restriction whose value changed is already
// a line not approved, so it is not reported dropped as well.
func Beyond(asked, approved []string) []string {
	ok := make(map[string]bool, len(approved))
	for _, a := range approved {
		ok[a] = true
	}
	has := make(map[string]bool, len(asked))
	keys := make(map[string]bool, len(asked))
	var out []string
	for _, a := range asked {
		has[a] = true
		keys[settingKey(a)] = true
		if !ok[a] {
			out = append(out, a)
		}
	}
	for _, a := range approved {
		if !has[a] && !isGrant(a) && !keys[settingKey(a)] {
			out = append(out, DropPrefix+a)
		}
	}
	return out
}

// DropPrefix marks a line of Beyond that an approved version set and the
// new one drops.
const DropPrefix = "drops "

// isGrant reports whether a grant line only widens what a call may use:
// dropping it asks for less.
func isGrant(line string) bool {
	return strings.HasPrefix(line, "mount ") || strings.HasPrefix(line, "env ") || strings.HasPrefix(line, "http.allow ")
}

// settingKey is the key a setting line sets ("memory" of `memory = "64MiB"`).
func settingKey(line string) string {
	k, _, _ := strings.Cut(line, " = ")
	return k
}

// Describe groups grant lines for people: mounts, outbound HTTP, secrets,
// environment, limits and other settings.
func Describe(lines []string) string {
	if len(lines) == 0 {
		return "  nothing beyond the server's defaults\n"
	}
	var b strings.Builder
	for _, l := range lines {
		kind := "limit or setting"
		switch {
		case strings.HasPrefix(l, DropPrefix):
			kind = "DROPS a limit or restriction (the server's default applies)"
		case strings.HasPrefix(l, "mount ") && mountsToolsDir(strings.TrimPrefix(l, "mount ")):
			kind = "mount of the TOOLS DIRECTORY, or through .. (a tool writing there can change modules and policies)"
		case strings.HasPrefix(l, "mount "):
			kind = "mount"
		case strings.HasPrefix(l, "http.allow ") && strings.Contains(l, `"headers"`):
			kind = "outbound host, with secret headers"
		case strings.HasPrefix(l, "http.allow "):
			kind = "outbound host"
		case strings.HasPrefix(l, "http."):
			kind = "outbound HTTP setting"
		case strings.HasPrefix(l, "env ") && strings.Contains(l, `"from"`):
			kind = "environment, from the host (a secret?)"
		case strings.HasPrefix(l, "env "):
			kind = "environment"
		case strings.HasPrefix(l, "access "):
			kind = "access"
		}
		fmt.Fprintf(&b, "  %-38s %s\n", kind+":", l)
	}
	return b.String()
}

// mountsToolsDir reports whether a mount grant's host path is the tools
// directory, a path through ".." (one of its parents, or the directory
// itself under its own name) or the root: a relative host path is
// resolved against the tools directory, where the policy file lies.
func mountsToolsDir(grant string) bool {
	var m struct {
		Host string `json:"host"`
	}
	if json.Unmarshal([]byte(grant), &m) != nil {
		return false
	}
	h := filepath.Clean(m.Host)
	return h == "." || h == ".." || strings.HasPrefix(h, "../") || h == "/"
}
