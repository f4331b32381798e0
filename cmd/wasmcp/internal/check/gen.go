package check

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting the generator follows (and so recursive
// schemas).
const maxDepth = 12

// errCannot is why the generator cannot make a value for a schema.
type errCannot struct{ why string }

func (e *errCannot) Error() string { return e.why }

func cannot(format string, a ...any) error { return &errCannot{fmt.Sprintf(format, a...)} }

// generator makes deterministic JSON values that a JSON Schema accepts:
// the first enum value or the const; the first branch of oneOf and anyOf;
// allOf merged; for objects their required properties; for arrays their
// minimum number of items (at least one, distinct when uniqueItems asks);
// numbers and strings within their bounds. What it cannot handle (a
// pattern none of its candidates match, not, if/then, contains, …) is an
// error saying so; the caller validates every value with the compiled
// schema anyway.
type generator struct {
	root map[string]any
}

// Generate returns a value for the JSON Schema text schema.
func Generate(schema []byte) (any, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	obj, _ := root.(map[string]any)
	g := &generator{root: obj}
	return g.value(root, 0, 0)
}

// value generates a value of schema s; variant (0, 1, …) makes the items
// of an array differ.
func (g *generator) value(s any, depth, variant int) (any, error) {
	if depth > maxDepth {
		return nil, cannot("schema nested deeper than %d levels (recursive?)", maxDepth)
	}
	switch s := s.(type) {
	case bool:
		if !s {
			return nil, cannot("schema false accepts nothing")
		}
		return "example", nil
	case map[string]any:
		return g.object(s, depth, variant)
	case nil:
		return "example", nil
	}
	return nil, cannot("schema is a %T, not an object", s)
}

func (g *generator) object(s map[string]any, depth, variant int) (any, error) {
	if ref, ok := s["$ref"].(string); ok {
		target, err := g.resolve(ref)
		if err != nil {
			return nil, err
		}
		return g.value(target, depth+1, variant)
	}
	if _, ok := s["$dynamicRef"]; ok {
		return nil, cannot("$dynamicRef is not supported")
	}
	for _, k := range []string{"not", "if", "dependentSchemas", "dependentRequired", "dependencies"} {
		if _, ok := s[k]; ok {
			return nil, cannot("%q is not supported", k)
		}
	}
	if c, ok := s["const"]; ok {
		return c, nil
	}
	if e, ok := s["enum"].([]any); ok {
		if len(e) == 0 {
			return nil, cannot("empty enum")
		}
		return e[variant%len(e)], nil
	}
	if all, ok := s["allOf"].([]any); ok {
		merged, err := mergeAll(s, all)
		if err != nil {
			return nil, err
		}
		return g.value(merged, depth+1, variant)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if br, ok := s[k].([]any); ok {
			if len(br) == 0 {
				return nil, cannot("empty %s", k)
			}
			rest := without(s, k)
			merged, err := mergeAll(rest, br[:1])
			if err != nil {
				return nil, err
			}
			return g.value(merged, depth+1, variant)
		}
	}
	switch t := pickType(s); t {
	case "object":
		return g.objectValue(s, depth, variant)
	case "array":
		return g.arrayValue(s, depth)
	case "string":
		return stringValue(s, variant)
	case "integer":
		return numberValue(s, variant, true)
	case "number":
		return numberValue(s, variant, false)
	case "boolean":
		return variant%2 == 0, nil
	case "null":
		return nil, nil
	case "":
		return "example", nil
	default:
		return nil, cannot("unknown type %q", t)
	}
}

// pickType is the schema's type, the first that is not null when it lists
// several, or one its keywords imply.
func pickType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		first := ""
		for _, x := range t {
			if name, ok := x.(string); ok {
				if name != "null" {
					return name
				}
				first = name
			}
		}
		return first
	}
	switch {
	case has(s, "properties", "required", "additionalProperties", "minProperties"):
		return "object"
	case has(s, "items", "prefixItems", "minItems", "maxItems"):
		return "array"
	case has(s, "minLength", "maxLength", "pattern", "format"):
		return "string"
	case has(s, "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	}
	return ""
}

func has(s map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

func without(s map[string]any, key string) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// mergeAll merges base with each of the schemas in all: properties are
// united, required lists joined, other keywords taken from the later
// schema. A non-object member cannot be merged.
func mergeAll(base map[string]any, all []any) (map[string]any, error) {
	out := without(base, "allOf")
	for _, a := range all {
		m, ok := a.(map[string]any)
		if !ok {
			if b, isBool := a.(bool); isBool && b {
				continue
			}
			return nil, cannot("allOf/oneOf/anyOf member is not an object schema")
		}
		for k, v := range m {
			switch k {
			case "properties":
				props, _ := out["properties"].(map[string]any)
				merged := map[string]any{}
				for pk, pv := range props {
					merged[pk] = pv
				}
				if mp, ok := v.(map[string]any); ok {
					for pk, pv := range mp {
						merged[pk] = pv
					}
				}
				out["properties"] = merged
			case "required":
				req, _ := out["required"].([]any)
				if mr, ok := v.([]any); ok {
					out["required"] = append(append([]any(nil), req...), mr...)
				}
			default:
				out[k] = v
			}
		}
	}
	return out, nil
}

// resolve follows a local JSON pointer reference ("#", "#/$defs/x").
func (g *generator) resolve(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, cannot("$ref %q is not local to the schema", ref)
	}
	var cur any = g.root
	ptr := strings.TrimPrefix(ref, "#")
	if ptr == "" {
		return cur, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, cannot("$ref %q is not a JSON pointer", ref)
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, cannot("$ref %q names nothing", ref)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, cannot("$ref %q names nothing", ref)
			}
			cur = c[i]
		default:
			return nil, cannot("$ref %q names nothing", ref)
		}
	}
	return cur, nil
}

func (g *generator) objectValue(s map[string]any, depth, variant int) (any, error) {
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	var names []string
	for _, r := range asList(s["required"]) {
		if name, ok := r.(string); ok {
			names = append(names, name)
		}
	}
	// Fill up to minProperties with the declared properties, in name order.
	if minP, ok := asInt(s["minProperties"]); ok && minP > len(names) {
		var optional []string
		for k := range props {
			optional = append(optional, k)
		}
		sort.Strings(optional)
		for _, k := range optional {
			if len(names) >= minP {
				break
			}
			if !contains(names, k) {
				names = append(names, k)
			}
		}
		if len(names) < minP {
			return nil, cannot("minProperties %d exceeds the declared properties", minP)
		}
	}
	for _, name := range names {
		if _, done := out[name]; done {
			continue
		}
		ps, ok := props[name]
		if !ok {
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					return nil, cannot("required property %q is not declared and additionalProperties is false", name)
				}
				ps = true
			case map[string]any:
				ps = ap
			default:
				ps = true
			}
		}
		v, err := g.value(ps, depth+1, variant)
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

func (g *generator) arrayValue(s map[string]any, depth int) (any, error) {
	prefix := asList(s["prefixItems"])
	n := len(prefix)
	if n == 0 {
		n = 1
	}
	if minI, ok := asInt(s["minItems"]); ok && minI > n {
		n = minI
	}
	if maxI, ok := asInt(s["maxItems"]); ok && maxI < n {
		n = maxI
	}
	if n > 1000 {
		return nil, cannot("minItems %d is too many to generate", n)
	}
	items := s["items"]
	if items == nil {
		items = true
	}
	if b, ok := items.(bool); ok && !b && n > len(prefix) {
		n = len(prefix)
	}
	out := make([]any, 0, n)
	for i := 0; i < n; i++ {
		var is any = items
		if i < len(prefix) {
			is = prefix[i]
		}
		v, err := g.value(is, depth+1, i)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// stringCandidates are tried, in order, against a pattern.
var stringCandidates = []string{"example", "a", "A", "0", "1", "a1", "abc", "test", "x-1", "example.com",
	"2026-01-01", "user@example.com", "https://example.com/", "00000000-0000-4000-8000-000000000000"}

var formats = map[string]string{
	"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "time": "00:00:00Z",
	"duration": "P1D", "email": "user@example.com", "idn-email": "user@example.com",
	"hostname": "example.com", "idn-hostname": "example.com", "ipv4": "192.0.2.1",
	"ipv6": "2001:db8::1", "uri": "https://example.com/", "uri-reference": "https://example.com/",
	"iri": "https://example.com/", "iri-reference": "https://example.com/", "url": "https://example.com/",
	"uri-template": "https://example.com/{id}", "uuid": "00000000-0000-4000-8000-000000000000",
	"json-pointer": "/a", "relative-json-pointer": "0", "regex": "a+",
}

func stringValue(s map[string]any, variant int) (any, error) {
	base := "example"
	if variant > 0 {
		base = "example" + strconv.Itoa(variant)
	}
	if f, ok := s["format"].(string); ok {
		if v, known := formats[f]; known {
			base = v
		}
	}
	if p, ok := s["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, cannot("pattern %q", p)
		}
		found := false
		for _, c := range append([]string{base}, stringCandidates...) {
			if re.MatchString(c) && lengthOK(s, c) {
				base, found = c, true
				break
			}
		}
		if !found {
			return nil, cannot("no candidate string matches pattern %q", p)
		}
		return base, nil
	}
	n := len([]rune(base))
	if minL, ok := asInt(s["minLength"]); ok && n < minL {
		base += strings.Repeat("x", minL-n)
	}
	if maxL, ok := asInt(s["maxLength"]); ok && len([]rune(base)) > maxL {
		base = string([]rune(base)[:maxL])
	}
	return base, nil
}

func lengthOK(s map[string]any, v string) bool {
	n := len([]rune(v))
	if minL, ok := asInt(s["minLength"]); ok && n < minL {
		return false
	}
	if maxL, ok := asInt(s["maxLength"]); ok && n > maxL {
		return false
	}
	return true
}

func numberValue(s map[string]any, variant int, integer bool) (any, error) {
	lo, hi := math.Inf(-1), math.Inf(1)
	if v, ok := asFloat(s["minimum"]); ok {
		lo = v
	}
	if v, ok := asFloat(s["maximum"]); ok {
		hi = v
	}
	// exclusiveMinimum is a number (2019-09 and later) or a flag on
	// minimum (draft 4).
	step := 1.0
	if !integer {
		step = 0.5
	}
	switch v := s["exclusiveMinimum"].(type) {
	case float64:
		lo = math.Max(lo, v+step)
	case bool:
		if v {
			lo += step
		}
	}
	switch v := s["exclusiveMaximum"].(type) {
	case float64:
		hi = math.Min(hi, v-step)
	case bool:
		if v {
			hi -= step
		}
	}
	if integer {
		lo, hi = math.Ceil(lo), math.Floor(hi)
	}
	x := 1.0
	if !integer {
		x = 1.5
	}
	x += float64(variant)
	if x < lo {
		x = lo + float64(variant)
	}
	if x > hi {
		x = hi - float64(variant)
	}
	if m, ok := asFloat(s["multipleOf"]); ok && m > 0 {
		k := math.Ceil(x / m)
		x = k * m
		if x > hi {
			x = math.Floor(hi/m) * m
		}
	}
	if x < lo || x > hi || math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, cannot("no number in [%v, %v]", lo, hi)
	}
	if integer {
		return int64(x), nil
	}
	return x, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asFloat(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

func asInt(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1<<30 {
		return 0, false
	}
	return int(f), true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// invalidCandidates returns argument objects that a tool's input schema
// should refuse, built from valid arguments, each with what it breaks: a
// required property left out, a property of the wrong type, a property the
// schema does not allow, and, always last, an array where the root wants an
// object. The caller keeps the first its compiled schema refuses.
func invalidCandidates(schema []byte, valid map[string]any) []invalidArgs {
	var s map[string]any
	_ = json.Unmarshal(schema, &s)
	var out []invalidArgs
	for _, r := range asList(s["required"]) {
		if name, ok := r.(string); ok {
			m := copyMap(valid)
			delete(m, name)
			out = append(out, invalidArgs{m, "without the required property " + strconv.Quote(name)})
			break
		}
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		ps, _ := props[name].(map[string]any)
		wrong, ok := wrongType(pickType(ps))
		if !ok {
			continue
		}
		m := copyMap(valid)
		m[name] = wrong
		out = append(out, invalidArgs{m, fmt.Sprintf("with %q of the wrong type", name)})
		break
	}
	if ap, ok := s["additionalProperties"].(bool); ok && !ap {
		m := copyMap(valid)
		m["wasmcp_check_unknown"] = 1
		out = append(out, invalidArgs{m, "with an undeclared property"})
	}
	return append(out, invalidArgs{[]any{}, "as an array instead of an object"})
}

// invalidArgs are arguments a schema should refuse, and how.
type invalidArgs struct {
	args any
	what string
}

func wrongType(t string) (any, bool) {
	switch t {
	case "string":
		return 12345, true
	case "integer", "number":
		return "not a number", true
	case "boolean":
		return "yes", true
	case "object", "array":
		return "text", true
	case "null":
		return 0, true
	}
	return nil, false
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
