// Command jsonquery is a wasmcp tool module that queries JSON documents
// with a small path language.
//
// Path syntax (see parsePath): an optional leading "$", then segments
//
//	.name or name      object member (first segment needs no dot)
//	["name"] ['name']  object member with any characters
//	[N]                array element; negative N counts from the end
//	[M:N]              array slice (either bound may be omitted)
//	.* or [*]          every member of an object or element of an array
//	.length()          (last) the length of each match: array, object or string
//
// Example: store.books[*].author, items[-1], $["odd key"][0:2].length().
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// QueryIn is the json_query tool's input.
type QueryIn struct {
	JSON string `json:"json" jsonschema:"description=The JSON document to query, as text"`
	Path string `json:"path" jsonschema:"description=Path to evaluate, e.g. store.books[0].title or items[*].id or $[\"a key\"].length(). Empty or $ selects the whole document."`
}

// Match is one value the path selected.
type Match struct {
	Path  string `json:"path" jsonschema:"description=Normalized path of the value in the document"`
	Value any    `json:"value" jsonschema:"description=The selected JSON value"`
}

// QueryOut is the json_query tool's output.
type QueryOut struct {
	Count   int     `json:"count" jsonschema:"description=Number of matches"`
	Matches []Match `json:"matches"`
}

// newServer registers the tools. reactor.go hands the server to package
// reactor: built with -buildmode=c-shared (go run ./examples/wasm/build
// does), the module is a reactor the host runs from a snapshot of its
// start-up, as docs/writing-tools.md tells a tool author to build a Go tool.
// command.go (build tag command) serves it as a command module instead, the
// Go runtime started in every instance, for the benchmark that measures
// both (host/deadline_bench_test.go).
func newServer() *guest.Server {
	s := guest.New("jsonquery", "1.0.0",
		guest.WithInstructions("Use json_query to pull values out of a JSON document instead of reading it by eye."))
	guest.AddTool(s, guest.Tool{
		Name:  "json_query",
		Title: "Query JSON",
		Description: "Evaluates a path expression against a JSON document and returns every matching value with its location. " +
			"Syntax: a.b[0].c for members and indexes, [-1] for the last element, [1:3] for slices, * for every member or element, " +
			`["key with.dots"] for odd keys, and a final .length() for the size of arrays, objects and strings. ` +
			"A path that selects nothing returns zero matches.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
	}, query)
	return s
}

func query(c *guest.Context, in QueryIn) (QueryOut, error) {
	doc, err := decodeJSON(in.JSON)
	if err != nil {
		return QueryOut{}, err
	}
	steps, err := parsePath(in.Path)
	if err != nil {
		return QueryOut{}, err
	}
	matches := eval(doc, steps)
	return QueryOut{Count: len(matches), Matches: matches}, nil
}

// decodeJSON decodes one JSON value, keeping numbers exact.
func decodeJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the json argument is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("the json argument has more than one JSON value")
	}
	return v, nil
}

type stepKind int

const (
	stepMember stepKind = iota
	stepIndex
	stepSlice
	stepWildcard
	stepLength
)

type step struct {
	kind       stepKind
	name       string
	index      int
	start, end *int
}

// parsePath parses the path syntax described in the package comment.
func parsePath(path string) ([]step, error) {
	p := strings.TrimSpace(path)
	p = strings.TrimPrefix(p, "$")
	var steps []step
	first := true
	for p != "" {
		switch {
		case p[0] == '.':
			p = p[1:]
			if p == "" {
				return nil, fmt.Errorf("path %q ends with '.'", path)
			}
			if p[0] == '.' {
				return nil, fmt.Errorf("path %q: recursive descent (..) is not supported", path)
			}
			fallthrough
		case first && p[0] != '[':
			n := strings.IndexAny(p, ".[")
			if n < 0 {
				n = len(p)
			}
			name := p[:n]
			p = p[n:]
			switch name {
			case "":
				return nil, fmt.Errorf("path %q: empty member name", path)
			case "*":
				steps = append(steps, step{kind: stepWildcard})
			case "length()":
				if p != "" {
					return nil, fmt.Errorf("path %q: length() must come last", path)
				}
				steps = append(steps, step{kind: stepLength})
			default:
				steps = append(steps, step{kind: stepMember, name: name})
			}
		case p[0] == '[':
			end, st, err := parseBracket(p)
			if err != nil {
				return nil, fmt.Errorf("path %q: %v", path, err)
			}
			steps = append(steps, st)
			p = p[end:]
		default:
			return nil, fmt.Errorf("path %q: unexpected %q", path, p[:1])
		}
		first = false
	}
	return steps, nil
}

// parseBracket parses one [...] segment at the start of p and returns its
// length.
func parseBracket(p string) (int, step, error) {
	if len(p) > 1 && (p[1] == '"' || p[1] == '\'') {
		q := p[1]
		var b strings.Builder
		for i := 2; i < len(p); i++ {
			switch p[i] {
			case '\\':
				if i+1 >= len(p) {
					return 0, step{}, fmt.Errorf("unterminated quoted key")
				}
				i++
				b.WriteByte(p[i])
			case q:
				if i+1 >= len(p) || p[i+1] != ']' {
					return 0, step{}, fmt.Errorf("expected ] after quoted key")
				}
				return i + 2, step{kind: stepMember, name: b.String()}, nil
			default:
				b.WriteByte(p[i])
			}
		}
		return 0, step{}, fmt.Errorf("unterminated quoted key")
	}
	end := strings.IndexByte(p, ']')
	if end < 0 {
		return 0, step{}, fmt.Errorf("missing ]")
	}
	inner := strings.TrimSpace(p[1:end])
	if inner == "*" {
		return end + 1, step{kind: stepWildcard}, nil
	}
	if lo, hi, ok := strings.Cut(inner, ":"); ok {
		st := step{kind: stepSlice}
		for _, b := range []struct {
			s   string
			dst **int
		}{{lo, &st.start}, {hi, &st.end}} {
			if s := strings.TrimSpace(b.s); s != "" {
				n, err := strconv.Atoi(s)
				if err != nil {
					return 0, step{}, fmt.Errorf("slice bound %q is not an integer", s)
				}
				*b.dst = &n
			}
		}
		return end + 1, st, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil {
		return 0, step{}, fmt.Errorf("index %q is not an integer (quote member names: [\"name\"])", inner)
	}
	return end + 1, step{kind: stepIndex, index: n}, nil
}

// eval applies the steps to doc and returns the matches in document order.
func eval(doc any, steps []step) []Match {
	cur := []Match{{Path: "$", Value: doc}}
	for _, st := range steps {
		var next []Match
		for _, m := range cur {
			next = append(next, apply(m, st)...)
		}
		cur = next
	}
	if cur == nil {
		cur = []Match{}
	}
	return cur
}

func apply(m Match, st step) []Match {
	switch v := m.Value.(type) {
	case map[string]any:
		switch st.kind {
		case stepMember:
			if x, ok := v[st.name]; ok {
				return []Match{{Path: m.Path + memberPath(st.name), Value: x}}
			}
		case stepWildcard:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			out := make([]Match, 0, len(keys))
			for _, k := range keys {
				out = append(out, Match{Path: m.Path + memberPath(k), Value: v[k]})
			}
			return out
		case stepLength:
			return []Match{{Path: m.Path + ".length()", Value: len(v)}}
		}
	case []any:
		switch st.kind {
		case stepIndex:
			i := st.index
			if i < 0 {
				i += len(v)
			}
			if i >= 0 && i < len(v) {
				return []Match{{Path: fmt.Sprintf("%s[%d]", m.Path, i), Value: v[i]}}
			}
		case stepSlice:
			lo, hi := bound(st.start, 0, len(v)), bound(st.end, len(v), len(v))
			var out []Match
			for i := lo; i < hi; i++ {
				out = append(out, Match{Path: fmt.Sprintf("%s[%d]", m.Path, i), Value: v[i]})
			}
			return out
		case stepWildcard:
			out := make([]Match, 0, len(v))
			for i, x := range v {
				out = append(out, Match{Path: fmt.Sprintf("%s[%d]", m.Path, i), Value: x})
			}
			return out
		case stepLength:
			return []Match{{Path: m.Path + ".length()", Value: len(v)}}
		}
	case string:
		if st.kind == stepLength {
			return []Match{{Path: m.Path + ".length()", Value: utf8.RuneCountInString(v)}}
		}
	}
	return nil
}

// bound resolves an optional, possibly negative slice bound into [0, n].
func bound(b *int, def, n int) int {
	if b == nil {
		return def
	}
	i := *b
	if i < 0 {
		i += n
	}
	return max(0, min(i, n))
}

// memberPath renders a member access: .name for identifiers, ["name"] else.
func memberPath(name string) string {
	ident := name != ""
	for i, r := range name {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			ident = false
			break
		}
	}
	if ident {
		return "." + name
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(name)
	return "[" + strings.TrimSpace(b.String()) + "]"
}
