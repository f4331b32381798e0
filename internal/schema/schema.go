// Package schema compiles and applies the JSON Schemas of tools: input
// schemas are checked against tool arguments, output schemas against
// structuredContent. Schemas are compiled once, when a module is loaded.
// No schema may load anything: $ref to a file or the network is refused.
package schema

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bytedance/sonic"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Limits on a schema, checked by Compile (docs/design/guest-output.md, "Limits on
// what a guest writes"). The validator (santhosh-tekuri/jsonschema v6)
// follows every $ref and applicator at every instance location without
// memoising, so a schema whose references branch (allOf of two $refs to a
// definition that is itself an allOf of two $refs, 20 deep) costs 2^20
// evaluations per value: 0.8 s at depth 18, measured. Compile bounds the
// number of subschema evaluations a schema can cause at one instance
// location, counting each reference as often as it is reached, and
// refuses more; each evaluation costs about 4 µs, so the bound is about
// 40 ms per instance location at worst.
const (
	// MaxBytes is the largest schema document.
	MaxBytes = 1 << 20
	// MaxDepth is the deepest nesting of a schema document.
	MaxDepth = 64
	// MaxExpansion is the most subschema evaluations a schema may cause
	// for one value, references expanded.
	MaxExpansion = 10_000
)

// Schema is a compiled JSON Schema.
type Schema struct {
	s    *jsonschema.Schema
	cost int // subschema evaluations per value, at most MaxExpansion
	// fast is the schema's check in the common subset (fast.go), nil
	// when it uses anything else; a value it accepts is valid.
	fast *fastNode
}

var seq atomic.Uint64

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %q not allowed", url)
}

// Compile compiles raw (a JSON Schema document, 2020-12 unless it names
// another draft in $schema). If objectRoot is set, the schema must describe
// objects: its "type", when present, must be "object".
func Compile(raw []byte, objectRoot bool) (*Schema, error) {
	if len(raw) > MaxBytes {
		return nil, fmt.Errorf("schema is %d bytes; the limit is %d", len(raw), MaxBytes)
	}
	if d := depth(raw); d > MaxDepth {
		return nil, fmt.Errorf("schema nests deeper than %d levels", MaxDepth)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		if _, isBool := doc.(bool); isBool && !objectRoot {
			// true/false schemas are valid for outputs
		} else {
			return nil, errors.New("schema must be a JSON object")
		}
	}
	if objectRoot {
		if t, has := m["type"]; has && t != "object" {
			return nil, fmt.Errorf(`input schema must have "type": "object", not %v`, t)
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(compileECMA)
	url := fmt.Sprintf("mem:///schema/%d.json", seq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	cost := expansion(s, map[*jsonschema.Schema]int{}, map[*jsonschema.Schema]bool{})
	if cost > MaxExpansion {
		return nil, fmt.Errorf("schema is too costly to apply: its references and combinators expand to more than %d subschemas per value (the limit)", MaxExpansion)
	}
	return &Schema{s: s, cost: cost, fast: fastOf(s, 0)}, nil
}

// depth is the deepest nesting of arrays and objects in JSON text.
func depth(raw []byte) int {
	d, max, inStr := 0, 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			d++
			if d > max {
				max = d
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return max
}

// expansion counts the subschemas applying s may evaluate for one value
// and its members: each applicator's subschemas, each reference's target
// as often as it is referenced; a reference back to a schema being
// counted (recursion, which the value's own depth bounds) counts once.
// The count saturates just past MaxExpansion.
func expansion(s *jsonschema.Schema, memo map[*jsonschema.Schema]int, onPath map[*jsonschema.Schema]bool) int {
	if s == nil {
		return 0
	}
	if n, ok := memo[s]; ok {
		return n
	}
	if onPath[s] {
		return 1
	}
	onPath[s] = true
	n := 1
	add := func(c *jsonschema.Schema) {
		if n <= MaxExpansion {
			n += expansion(c, memo, onPath)
		}
	}
	addAny := func(v any) {
		switch v := v.(type) {
		case *jsonschema.Schema:
			add(v)
		case []*jsonschema.Schema:
			for _, c := range v {
				add(c)
			}
		}
	}
	add(s.Ref)
	add(s.RecursiveRef)
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
	}
	add(s.Not)
	for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for _, c := range l {
			add(c)
		}
	}
	add(s.If)
	add(s.Then)
	add(s.Else)
	add(s.PropertyNames)
	for _, c := range s.Properties {
		add(c)
	}
	for _, c := range s.PatternProperties {
		add(c)
	}
	addAny(s.AdditionalProperties)
	for _, c := range s.Dependencies {
		addAny(c)
	}
	for _, c := range s.DependentSchemas {
		add(c)
	}
	add(s.UnevaluatedProperties)
	add(s.Contains)
	addAny(s.Items)
	addAny(s.AdditionalItems)
	add(s.Items2020)
	add(s.UnevaluatedItems)
	add(s.ContentSchema)
	delete(onPath, s)
	if n > MaxExpansion {
		n = MaxExpansion + 1
	}
	memo[s] = n
	return n
}

// CompileOutput compiles a tool's outputSchema, which MCP requires to
// describe an object: its root must say "type": "object".
func CompileOutput(raw []byte) (*Schema, error) {
	var root struct {
		Type any `json:"type"`
	}
	if err := sonic.Unmarshal(raw, &root); err != nil {
		return nil, errors.New(`output schema must be a JSON object with "type": "object" at its root (MCP requires it)`)
	}
	if root.Type != "object" {
		if root.Type == nil {
			return nil, errors.New(`output schema must have "type": "object" at its root (MCP requires it); it has no "type"`)
		}
		return nil, fmt.Errorf(`output schema must have "type": "object" at its root (MCP requires it), not %v`, root.Type)
	}
	return Compile(raw, true)
}

var printer = message.NewPrinter(language.English)

var decoder = sonic.Config{UseNumber: true}.Froze()

// ValidateJSON checks a JSON document against the schema. A nil or empty
// document is validated as the empty object when emptyAsObject is set.
func (s *Schema) ValidateJSON(doc []byte, emptyAsObject bool) error {
	var v any
	if len(bytes.TrimSpace(doc)) == 0 || string(doc) == "null" {
		if !emptyAsObject {
			return errors.New("missing value")
		}
		v = map[string]any{}
	} else if err := decoder.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(v)
}

// ErrTimeout is returned by ValidateJSONContext when its context ends
// before the validation.
var ErrTimeout = errors.New("validation did not finish in time")

// inlineEvaluations is the most evaluations (the schema's cost times a
// rough count of the document's values) a validation may be expected to
// take to run on the caller's goroutine: about 8 ms.
const inlineEvaluations = 2048

// ValidateJSONContext is ValidateJSON bounded by ctx and by budget (0:
// none). A validation that may be long, by the schema's cost and the
// document's size, runs on its own goroutine and is abandoned with
// ErrTimeout when ctx ends or budget passes first (it finishes in the
// background, within the bound Compile set); a short one — nearly all —
// runs in place with no timer.
func (s *Schema) ValidateJSONContext(ctx context.Context, budget time.Duration, doc []byte, emptyAsObject bool) error {
	if s.cost*(len(doc)/32+1) <= inlineEvaluations || (ctx.Done() == nil && budget <= 0) {
		return s.ValidateJSON(doc, emptyAsObject)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrTimeout, context.Cause(ctx))
	}
	var expired <-chan time.Time
	if budget > 0 {
		t := time.NewTimer(budget)
		defer t.Stop()
		expired = t.C
	}
	done := make(chan error, 1)
	go func() { done <- s.ValidateJSON(doc, emptyAsObject) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrTimeout, context.Cause(ctx))
	case <-expired:
		return fmt.Errorf("%w: over the budget of %v", ErrTimeout, budget)
	}
}

// Validate checks a decoded value (numbers as json.Number or float64).
func (s *Schema) Validate(v any) error {
	if s.fast != nil && s.fast.accepts(v) {
		return nil
	}
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(flatten(ve))
	}
	return err
}

// flatten turns a validation error tree into one line naming each failing
// location, e.g. "/age: got string, want integer; /name: missing".
func flatten(ve *jsonschema.ValidationError) string {
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			parts = append(parts, fmt.Sprintf("%s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(parts) > 8 {
		parts = append(parts[:8], fmt.Sprintf("and %d more", len(parts)-8))
	}
	return strings.Join(parts, "; ")
}
