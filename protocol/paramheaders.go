package protocol

import (
	"fmt"
	"log/slog"
	"net/textproto"
	"sort"
	"strings"

	"github.com/bytedance/sonic"
)

// ParamHeader is one x-mcp-header annotation in a tool's inputSchema: over
// Streamable HTTP (2026-07-28) the client mirrors the argument at Path into
// the header Mcp-Param-<Name>, and the server checks the two agree.
type ParamHeader struct {
	// Name is the annotation's value, e.g. "Region".
	Name string
	// Header is the canonical header key, e.g. "Mcp-Param-Region".
	Header string
	// Path is the chain of property names from the tool's arguments down to
	// the annotated value.
	Path []string
}

// ParamHeaders returns the x-mcp-header bindings of a tool, computed once
// when the catalog was built; nil when the tool has none or is unknown.
func (c *Catalog) ParamHeaders(tool string) []ParamHeader {
	if e, ok := c.toolIdx[tool]; ok {
		return e.headers
	}
	return nil
}

// toolParamHeaders reads a tool's x-mcp-header annotations. An annotation
// that breaks the 2026-07-28 rules (not an RFC 9110 token, a name used
// twice compared case-insensitively, on a property that is not a string,
// integer or boolean, on a $ref, or reachable other than through
// "properties") is logged and left out: the server then expects no header
// for it.
func toolParamHeaders(tool string, inputSchema []byte, log *slog.Logger) []ParamHeader {
	if len(inputSchema) == 0 || !strings.Contains(string(inputSchema), "x-mcp-header") {
		return nil
	}
	var root map[string]any
	if err := sonic.Unmarshal(inputSchema, &root); err != nil {
		return nil
	}
	var out []ParamHeader
	var walk func(schema map[string]any, path []string)
	walk = func(schema map[string]any, path []string) {
		props, _ := schema["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p, ok := props[n].(map[string]any)
			if !ok {
				continue
			}
			at := append(append([]string(nil), path...), n)
			if raw, has := p["x-mcp-header"]; has {
				ph, err := paramHeader(raw, p, at)
				if err != nil {
					log.Warn("x-mcp-header annotation ignored", "tool", tool, "property", strings.Join(at, "."), "reason", err)
				} else {
					out = append(out, ph)
				}
			}
			walk(p, at)
		}
	}
	walk(root, nil)
	// A name used twice (compared case-insensitively) is ambiguous: no
	// binding with it is kept.
	uses := map[string]int{}
	for _, ph := range out {
		uses[strings.ToLower(ph.Name)]++
	}
	kept := out[:0]
	for _, ph := range out {
		if uses[strings.ToLower(ph.Name)] > 1 {
			log.Warn("x-mcp-header annotation ignored", "tool", tool, "property", strings.Join(ph.Path, "."),
				"reason", fmt.Sprintf("%q is used more than once (compared case-insensitively)", ph.Name))
			continue
		}
		kept = append(kept, ph)
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

func paramHeader(raw any, prop map[string]any, path []string) (ParamHeader, error) {
	name, ok := raw.(string)
	if !ok || name == "" {
		return ParamHeader{}, fmt.Errorf("the value must be a non-empty string")
	}
	if !isToken(name) {
		return ParamHeader{}, fmt.Errorf("%q is not an HTTP field-name token", name)
	}
	if _, ref := prop["$ref"]; ref {
		return ParamHeader{}, fmt.Errorf("annotated property is a $ref")
	}
	if !primitiveType(prop["type"]) {
		return ParamHeader{}, fmt.Errorf("annotated property must be of type string, integer or boolean")
	}
	return ParamHeader{Name: name, Header: textproto.CanonicalMIMEHeaderKey("Mcp-Param-" + name), Path: path}, nil
}

// primitiveType accepts "string", "integer" or "boolean", alone or with
// "null" in a type array.
func primitiveType(t any) bool {
	prim := func(s string) bool { return s == "string" || s == "integer" || s == "boolean" }
	switch v := t.(type) {
	case string:
		return prim(v)
	case []any:
		n := 0
		for _, e := range v {
			s, _ := e.(string)
			switch {
			case prim(s):
				n++
			case s == "null":
			default:
				return false
			}
		}
		return n == 1
	}
	return false
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
