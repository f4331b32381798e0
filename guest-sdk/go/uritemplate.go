package guest

import (
	"fmt"
	"strings"
)

// uriTemplate is a parsed RFC 6570 level-1 URI template: literal text and
// simple {name} expressions.
//
// The original matcher is the host's (internal/uritemplate in the wasmcp
// module), which picks the module that serves a resources/read; this one
// picks the handler inside the guest and is the stricter: a value is
// percent-decoded and never holds '/', '?' or '#'. It is a copy, not an
// import, because the SDK depends on nothing but the standard library and
// abi. Both are tested against one table, testdata/uritemplate.json, which
// records each one's answer where they differ.
type uriTemplate struct {
	raw   string
	parts []tmplPart
}

type tmplPart struct {
	literal string // set for literal parts
	varName string // set for expressions
}

// parseURITemplate parses a level-1 template. Expressions are {name}, where
// a name is made of letters, digits, '_' and '.' (or %-escapes); operators
// (+ # . / ; ? &), lists and modifiers of higher levels are rejected, as are
// two adjacent expressions (which cannot be matched unambiguously).
func parseURITemplate(raw string) (*uriTemplate, error) {
	t := &uriTemplate{raw: raw}
	seen := map[string]bool{}
	rest := raw
	for rest != "" {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			t.parts = append(t.parts, tmplPart{literal: rest})
			break
		}
		if rest[i] == '}' {
			return nil, fmt.Errorf("uri template %q: unmatched '}'", raw)
		}
		if i > 0 {
			t.parts = append(t.parts, tmplPart{literal: rest[:i]})
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed '{'", raw)
		}
		name := rest[i+1 : i+j]
		if name == "" {
			return nil, fmt.Errorf("uri template %q: empty expression", raw)
		}
		for _, r := range name {
			if !(r == '_' || r == '.' || r == '%' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return nil, fmt.Errorf("uri template %q: expression {%s} is not a level-1 {name}", raw, name)
			}
		}
		if seen[name] {
			return nil, fmt.Errorf("uri template %q: variable %q appears twice", raw, name)
		}
		seen[name] = true
		if n := len(t.parts); n > 0 && t.parts[n-1].varName != "" {
			return nil, fmt.Errorf("uri template %q: adjacent expressions cannot be matched", raw)
		}
		t.parts = append(t.parts, tmplPart{varName: name})
		rest = rest[i+j+1:]
	}
	return t, nil
}

// varNames returns the template's variable names in order.
func (t *uriTemplate) varNames() []string {
	var names []string
	for _, p := range t.parts {
		if p.varName != "" {
			names = append(names, p.varName)
		}
	}
	return names
}

// match reports whether uri is an expansion of the template and returns
// the variables' values, percent-decoded. A variable matches one or more
// characters other than '/', '?' and '#' (level-1 expansion escapes those,
// so a value never contains them raw).
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	vars := map[string]string{}
	if !t.matchFrom(0, uri, vars) {
		return nil, false
	}
	return vars, true
}

func (t *uriTemplate) matchFrom(i int, s string, vars map[string]string) bool {
	if i == len(t.parts) {
		return s == ""
	}
	p := t.parts[i]
	if p.varName == "" {
		return strings.HasPrefix(s, p.literal) && t.matchFrom(i+1, s[len(p.literal):], vars)
	}
	// Longest run of allowed characters first, then shorter ones.
	end := strings.IndexAny(s, "/?#")
	if end < 0 {
		end = len(s)
	}
	for n := end; n >= 1; n-- {
		if i+1 < len(t.parts) && !strings.HasPrefix(s[n:], t.parts[i+1].literal) {
			continue
		}
		v, err := percentDecode(s[:n])
		if err != nil {
			continue
		}
		if t.matchFrom(i+1, s[n:], vars) {
			vars[p.varName] = v
			return true
		}
	}
	return false
}

// percentDecode decodes %XX escapes ('+' stays '+', as in a URI path).
func percentDecode(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
			return "", fmt.Errorf("invalid escape %q", s[i:min(i+3, len(s))])
		}
		b.WriteByte(byte(unhex(s[i+1])<<4 | unhex(s[i+2])))
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}
