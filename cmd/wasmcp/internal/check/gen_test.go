package check

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/schema"
)

// Every generated value is valid for its schema, as the host's compiled
// schema (the one serve validates arguments with) sees it.
func TestGenerateValid(t *testing.T) {
	cases := map[string]string{
		"strings":   `{"type":"object","properties":{"a":{"type":"string","minLength":10},"b":{"type":"string","maxLength":2},"c":{"type":"string","format":"date-time"},"d":{"type":"string","pattern":"^[0-9]$"}},"required":["a","b","c","d"]}`,
		"numbers":   `{"type":"object","properties":{"i":{"type":"integer","minimum":5,"maximum":5},"n":{"type":"number","exclusiveMinimum":10},"m":{"type":"integer","multipleOf":7,"minimum":20},"x":{"type":"number","maximum":-3}},"required":["i","n","m","x"]}`,
		"enum":      `{"type":"object","properties":{"e":{"enum":["red","green"]},"k":{"const":{"deep":[1]}}},"required":["e","k"]}`,
		"arrays":    `{"type":"object","properties":{"l":{"type":"array","items":{"type":"integer"},"minItems":3,"uniqueItems":true},"t":{"type":"array","prefixItems":[{"type":"string"},{"type":"boolean"}],"items":false}},"required":["l","t"]}`,
		"nested":    `{"type":"object","properties":{"o":{"type":"object","properties":{"p":{"type":"object","properties":{"q":{"type":"null"}},"required":["q"]}},"required":["p"]}},"required":["o"]}`,
		"oneOf":     `{"type":"object","properties":{"v":{"oneOf":[{"type":"string","minLength":2},{"type":"integer"}]},"w":{"anyOf":[{"type":"boolean"},{"type":"string"}]}},"required":["v","w"]}`,
		"allOf":     `{"type":"object","allOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}},"required":["b"]}]}`,
		"ref":       `{"type":"object","$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},"properties":{"p":{"$ref":"#/$defs/pt"}},"required":["p"]}`,
		"nullable":  `{"type":"object","properties":{"s":{"type":["null","string"],"minLength":1}},"required":["s"]}`,
		"optional":  `{"type":"object","properties":{"s":{"type":"string"}}}`,
		"minProps":  `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"minProperties":2}`,
		"addlProps": `{"type":"object","required":["free"],"additionalProperties":{"type":"integer","minimum":3}}`,
		"untyped":   `{"type":"object","properties":{"any":{}},"required":["any"]}`,
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := schema.Compile([]byte(raw), true)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			v, err := Generate([]byte(raw))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			b, _ := json.Marshal(v)
			if err := s.ValidateJSON(b, true); err != nil {
				t.Errorf("generated %s, refused: %v", b, err)
			}
			again, _ := Generate([]byte(raw))
			if b2, _ := json.Marshal(again); string(b2) != string(b) {
				t.Errorf("not deterministic: %s then %s", b, b2)
			}
		})
	}
}

// What the generator cannot make is an error saying why, never a value.
func TestGenerateCannot(t *testing.T) {
	cases := map[string]string{
		"pattern":   `{"type":"object","properties":{"c":{"type":"string","pattern":"^[QZ]{7}$"}},"required":["c"]}`,
		"not":       `{"type":"object","properties":{"c":{"not":{"type":"string"}}},"required":["c"]}`,
		"false":     `{"type":"object","properties":{"c":false},"required":["c"]}`,
		"recursive": `{"$ref":"#"}`,
		"range":     `{"type":"object","properties":{"i":{"type":"integer","minimum":3,"maximum":2}},"required":["i"]}`,
		"remoteRef": `{"type":"object","properties":{"c":{"$ref":"https://example.com/s.json"}},"required":["c"]}`,
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := Generate([]byte(raw))
			var ce *errCannot
			if !errors.As(err, &ce) {
				t.Fatalf("Generate = %v, %v; want a cannot-generate error", v, err)
			}
		})
	}
}

// The invalid candidates for a schema are refused by it, and the first
// names what it breaks.
func TestInvalidCandidates(t *testing.T) {
	raw := []byte(`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string"}},"required":["s"],"additionalProperties":false}`)
	s, err := schema.Compile(raw, true)
	if err != nil {
		t.Fatal(err)
	}
	valid, err := Generate(raw)
	if err != nil {
		t.Fatal(err)
	}
	cands := invalidCandidates(raw, valid.(map[string]any))
	if len(cands) != 4 {
		t.Fatalf("%d candidates, want 4 (missing, wrong type, undeclared, array)", len(cands))
	}
	if !strings.Contains(cands[0].what, `"s"`) {
		t.Errorf("first candidate %q, want the required property left out", cands[0].what)
	}
	for _, c := range cands {
		b, _ := json.Marshal(c.args)
		if s.ValidateJSON(b, true) == nil {
			t.Errorf("candidate %s (%s) is valid", b, c.what)
		}
	}
}
