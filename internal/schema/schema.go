// Package schema compiles and applies the JSON Schemas of tools: input
// schemas are checked against tool arguments, output schemas against
// structuredContent. Schemas are compiled once, when a module is loaded.
// No schema may load anything: $ref to a file or the network is refused.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/bytedance/sonic"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema.
type Schema struct {
	s *jsonschema.Schema
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
	url := fmt.Sprintf("mem:///schema/%d.json", seq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return &Schema{s: s}, nil
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

// Validate checks a decoded value (numbers as json.Number or float64).
func (s *Schema) Validate(v any) error {
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
