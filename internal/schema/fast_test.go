package schema

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// fastSchemas are schemas in the fast subset (fastOf builds a check for
// each), the word_count tool's own two among them.
var fastSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string","description":"The text to count"}},"required":["text"]}`,
	`{"type":"object","properties":{"words":{"type":"integer","description":"w"},"lines":{"type":"integer"},"bytes":{"type":"integer"}},"required":["words","lines","bytes"]}`,
	`{"type":"object"}`,
	`{}`,
	`true`,
	`{"type":["string","null"]}`,
	`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"boolean"},"c":{"type":"null"}},"additionalProperties":false}`,
	`{"type":"object","additionalProperties":{"type":"integer"}}`,
	`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","minLength":1,"maxLength":3},"minItems":1,"maxItems":2}}}`,
	`{"type":"object","properties":{"mode":{"type":"string","enum":["a","b","ü"]}},"minProperties":1,"maxProperties":2}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer"},"l":{"items":{"type":"number"}}},"required":["n"]}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"integer"}}}`,
	`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":true}},"title":"t","default":{},"examples":[1],"deprecated":true}`,
	`{"enum":["a",1,null]}`, // partly: a number member is left to the validator
}

// slowSchemas use a keyword outside the subset: fastOf must refuse them.
var slowSchemas = []string{
	`false`,
	`{"type":"object","properties":{"p":{"type":"string","pattern":"^a"}}}`,
	`{"type":"integer","minimum":3}`,
	`{"type":"object","properties":{"p":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"string","format":"email"}`,
	`{"type":"object","properties":{"p":{"const":1}}}`,
	`{"type":"object","properties":{"p":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`,
	`{"type":"array","prefixItems":[{"type":"string"}]}`,
	`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`,
	`{"type":"object","unevaluatedProperties":false}`,
	`{"type":"array","uniqueItems":true}`,
	`{"type":"object","properties":{"p":false}}`,
}

func TestFastSubset(t *testing.T) {
	for _, raw := range fastSchemas {
		s, err := Compile([]byte(raw), false)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if s.fast == nil {
			t.Errorf("%s: not in the fast subset", raw)
		}
	}
	for _, raw := range slowSchemas {
		s, err := Compile([]byte(raw), false)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if s.fast != nil {
			t.Errorf("%s: took the fast path", raw)
		}
	}
}

// TestFastAgrees checks the fast path's promise on generated values: a
// value it accepts, the general validator accepts; and that it accepts
// most valid values (it is not a check that never fires). Messages come
// from the general validator alone, so they are compared on the same
// values through Validate.
func TestFastAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	for _, raw := range fastSchemas {
		s, err := Compile([]byte(raw), false)
		if err != nil {
			t.Fatal(err)
		}
		valid, fastValid := 0, 0
		for i := 0; i < 4000; i++ {
			doc := genJSON(r, 0)
			var v any
			if err := decoder.UnmarshalFromString(doc, &v); err != nil {
				t.Fatalf("generated %s: %v", doc, err)
			}
			full := s.s.Validate(v) == nil
			fast := s.fast.accepts(v)
			if fast && !full {
				t.Fatalf("schema %s: the fast path accepts %s, the validator refuses it: %v", raw, doc, s.s.Validate(v))
			}
			if full {
				valid++
			}
			if fast {
				fastValid++
			}
			if doc == "null" {
				continue // ValidateJSON takes null for a missing value
			}
			if got := s.ValidateJSON([]byte(doc), false); (got == nil) != full {
				t.Fatalf("schema %s, %s: ValidateJSON says %v, the validator %v", raw, doc, got, full)
			}
		}
		if partial := strings.Contains(raw, `"enum":["a",1`); !partial && valid > 0 && fastValid*10 < valid*9 {
			t.Errorf("schema %s: the fast path accepted %d of %d valid values", raw, fastValid, valid)
		}
	}
}

// genJSON is a random JSON text drawn from the values the schemas above
// name (their property names, short strings, integers written several
// ways), so that valid and invalid values both turn up often.
func genJSON(r *rand.Rand, depth int) string {
	names := []string{"text", "words", "lines", "bytes", "a", "b", "c", "tags", "mode", "n", "l", "o", "x", "zz"}
	k := r.IntN(10)
	if depth > 3 && k >= 7 {
		k = r.IntN(7)
	}
	switch k {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[r.IntN(2)]
	case 2:
		return []string{`"a"`, `"b"`, `"ü"`, `""`, `"abcd"`, `"éé"`, `"x\ny"`}[r.IntN(7)]
	case 3:
		return []string{"0", "-7", "12", "1.0", "1.5", "1e2", "-0", "12345678901234567890", "2E-1"}[r.IntN(9)]
	case 4, 5, 6:
		return []string{`"text"`, `"mode"`, "3"}[r.IntN(3)]
	case 7, 8:
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("%q:%s", names[r.IntN(len(names))], genJSON(r, depth+1))
		}
		if r.IntN(3) == 0 { // often the shape a schema wants
			parts = append(parts, `"text":"hi"`, `"words":1,"lines":2,"bytes":3`, `"n":4`, `"x":5`)
		}
		return "{" + strings.Join(parts, ",") + "}"
	default:
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = genJSON(r, depth+1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
}

// TestFastNumbersAreJSONNumbers pins what the fast path relies on: the
// decoder gives numbers as encoding/json's Number.
func TestFastNumbersAreJSONNumbers(t *testing.T) {
	var v any
	if err := decoder.UnmarshalFromString(`{"n":12}`, &v); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(map[string]any)["n"].(json.Number); !ok {
		t.Fatalf("a number decodes as %T", v.(map[string]any)["n"])
	}
}
