// Package uritemplate parses RFC 6570 level-1 URI templates
// ("file:///{path}", "test://template/{id}/data": literal text and
// {name} expressions) and matches URIs against them, the two ways wasmcp
// needs:
//
//   - Parse and Template.Match are the host's: it checks a module's
//     resource templates at load with Parse and picks the module that
//     serves a resources/read with Match. They are lenient on purpose
//     (the host only routes; the module decides): a value is the text
//     up to the next literal, as written.
//   - ParseStrict and Template.MatchStrict are the Go guest SDK's: it
//     picks the handler inside the guest and hands it the values. A
//     value never holds '/', '?' or '#' raw (level-1 expansion escapes
//     them) and is percent-decoded.
//
// Both are tested against one table, testdata/uritemplate.json, which
// records each one's answer where they differ. The package is part of
// the abi module (standard library only), so the host and the SDK share
// it.
package uritemplate

import (
	"fmt"
	"strings"
)

// Template is a parsed URI template.
type Template struct {
	raw   string
	parts []part
}

// part is one literal, or one {name} expression.
type part struct {
	lit  string // literal text, or "" for an expression
	name string // the expression's variable name
}

// Parse parses a level-1 template as the host accepts it: every {name}
// is closed and non-empty and holds none of "{/?#&,+*" (so no operator,
// list or modifier of higher levels), two expressions are never
// adjacent (they could not be told apart), and the template is not
// empty.
func Parse(s string) (*Template, error) {
	t := &Template{raw: s}
	rest := s
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			t.parts = append(t.parts, part{lit: rest})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, part{lit: rest[:i]})
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed '{'", s)
		}
		name := rest[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, "{/?#&,+*") {
			return nil, fmt.Errorf("uri template %q: expression {%s} is not a level-1 {name}", s, name)
		}
		if n := len(t.parts); n > 0 && t.parts[n-1].lit == "" {
			return nil, fmt.Errorf("uri template %q: adjacent expressions cannot be matched", s)
		}
		t.parts = append(t.parts, part{name: name})
		rest = rest[i+j+1:]
	}
	if len(t.parts) == 0 {
		return nil, fmt.Errorf("uri template is empty")
	}
	return t, nil
}

// ParseStrict parses a template as the Go guest SDK accepts it: what
// Parse accepts, with no stray '}', every name made of letters, digits,
// '_' and '.' (or %-escapes), and no name used twice.
func ParseStrict(s string) (*Template, error) {
	t, err := Parse(s)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range t.parts {
		if p.lit != "" {
			// Parse took every {…}: a '}' left in a literal is stray.
			if strings.IndexByte(p.lit, '}') >= 0 {
				return nil, fmt.Errorf("uri template %q: unmatched '}'", s)
			}
			continue
		}
		for _, r := range p.name {
			if !(r == '_' || r == '.' || r == '%' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return nil, fmt.Errorf("uri template %q: expression {%s} is not a level-1 {name}", s, p.name)
			}
		}
		if seen[p.name] {
			return nil, fmt.Errorf("uri template %q: variable %q appears twice", s, p.name)
		}
		seen[p.name] = true
	}
	return t, nil
}

// String returns the template as written.
func (t *Template) String() string { return t.raw }

// Names returns the template's variable names in order.
func (t *Template) Names() []string {
	var names []string
	for _, p := range t.parts {
		if p.lit == "" {
			names = append(names, p.name)
		}
	}
	return names
}

// Match is the host's match: it reports whether uri matches and the
// variables' values as written. Each variable takes the non-empty text
// up to the first occurrence of the literal after it (to the end when
// none follows).
func (t *Template) Match(uri string) (map[string]string, bool) {
	var vars map[string]string
	rest := uri
	for i, p := range t.parts {
		if p.lit != "" {
			if !strings.HasPrefix(rest, p.lit) {
				return nil, false
			}
			rest = rest[len(p.lit):]
			continue
		}
		end := len(rest)
		if i+1 < len(t.parts) {
			k := strings.Index(rest, t.parts[i+1].lit)
			if k < 0 {
				return nil, false
			}
			end = k
		}
		if end == 0 {
			return nil, false
		}
		if vars == nil {
			vars = map[string]string{}
		}
		vars[p.name] = rest[:end]
		rest = rest[end:]
	}
	return vars, rest == ""
}

// MatchStrict is the guest's match: it reports whether uri is an
// expansion of the template and returns the variables' values,
// percent-decoded. A variable matches one or more characters other than
// '/', '?' and '#' (level-1 expansion escapes those, so a value never
// contains them raw), the longest run that lets the rest match.
func (t *Template) MatchStrict(uri string) (map[string]string, bool) {
	vars := map[string]string{}
	if !t.matchFrom(0, uri, vars) {
		return nil, false
	}
	return vars, true
}

// matchFrom matches s against the parts from the i-th on, filling vars.
func (t *Template) matchFrom(i int, s string, vars map[string]string) bool {
	if i == len(t.parts) {
		return s == ""
	}
	p := t.parts[i]
	if p.lit != "" {
		return strings.HasPrefix(s, p.lit) && t.matchFrom(i+1, s[len(p.lit):], vars)
	}
	// Longest run of allowed characters first, then shorter ones.
	end := strings.IndexAny(s, "/?#")
	if end < 0 {
		end = len(s)
	}
	for n := end; n >= 1; n-- {
		if i+1 < len(t.parts) && !strings.HasPrefix(s[n:], t.parts[i+1].lit) {
			continue
		}
		v, err := percentDecode(s[:n])
		if err != nil {
			continue
		}
		if t.matchFrom(i+1, s[n:], vars) {
			vars[p.name] = v
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

// unhex is the value of a hex digit, or -1.
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
