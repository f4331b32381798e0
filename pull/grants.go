package pull

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
// reader matches to a field) that is not lowercase ASCII: the reader
// matches keys case-insensitively with Unicode folding, so `MOUNT` is a
// mount and `acceſſ` (U+017F, long s) the access table, while the lines
// here, by their spelling, would file them as limits. Keys of name tables
// keep their case; what is under a name is structural again. No key may
// hold a control or invisible character (ESC, CR, a bidi override), which
// would make a listing show other than what the server reads.
func lowercaseKeys(path string, v any) error {
	for _, t := range tablesOf(v) {
		for k, sub := range t {
			var p string
			full := strings.TrimPrefix(path+"."+k, ".")
			switch {
			case !printable(k):
				return fmt.Errorf("policy: key %s holds a control or invisible character: a listing would not show what the server reads", Printable(strconv.Quote(full)))
			case nameTables[path]:
				p = path + ".*"
			case !asciiKey(k):
				return fmt.Errorf("policy: key %s is not lowercase ASCII (the server matches keys case-insensitively, with Unicode folding: %q may be read as another key); write keys in a-z, 0-9, _ and -",
					Printable(strconv.Quote(full)), k)
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
		fmt.Fprintf(&b, "  %-38s %s\n", kind+":", Printable(l))
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

// asciiKey reports whether k is a key as the policy reader's fields are
// spelled: lowercase ASCII letters, digits, '_' and '-'.
func asciiKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// printable reports whether s holds only graphic characters and spaces:
// no control character (C0, DEL, C1) and no format character (Cf: bidi
// overrides, zero-width joiners), which a terminal acts on or hides.
func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// Printable is s made safe to show on a terminal: every control, format
// or invalid character written as a Go escape (\x1b, \u202e), so remote
// data (policy lines, a signer's identity) cannot move the cursor, hide
// text or reorder a line. A backslash stays as it is.
func Printable(s string) string {
	if printable(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r):
			if r < 0x100 {
				fmt.Fprintf(&b, "\\x%02x", r)
			} else {
				fmt.Fprintf(&b, "\\u%04x", r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
