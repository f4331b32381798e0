// Package uritemplate matches URIs against RFC 6570 level-1 templates
// ("file:///{path}", "test://template/{id}/data"): every {name} matches one
// non-empty run of characters up to the next literal.
//
// This is the original matcher: the host uses it to check a module's
// resource templates at load and to pick the module that serves a
// resources/read. The Go guest SDK has a stricter twin
// (guest-sdk/go/uritemplate.go: it percent-decodes values and never lets
// one hold '/', '?' or '#') because the SDK imports nothing. Both are
// tested against one table, guest-sdk/go/testdata/uritemplate.json, which
// records each one's answer where they differ.
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

type part struct {
	lit string // literal text, or "" for a variable
	v   string // variable name
}

// Parse parses a level-1 template. Two variables may not be adjacent.
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
			return nil, fmt.Errorf("uri template %q: unclosed {", s)
		}
		name := rest[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, "{/?#&,+*") {
			return nil, fmt.Errorf("uri template %q: bad variable %q", s, name)
		}
		if n := len(t.parts); n > 0 && t.parts[n-1].lit == "" {
			return nil, fmt.Errorf("uri template %q: adjacent variables", s)
		}
		t.parts = append(t.parts, part{v: name})
		rest = rest[i+j+1:]
	}
	if len(t.parts) == 0 {
		return nil, fmt.Errorf("uri template is empty")
	}
	return t, nil
}

// String returns the template as written.
func (t *Template) String() string { return t.raw }

// Match reports whether uri matches, and the variables' values.
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
		vars[p.v] = rest[:end]
		rest = rest[end:]
	}
	return vars, rest == ""
}
