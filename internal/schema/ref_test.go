package schema

import (
	"strings"
	"testing"
)

// A schema may reference its own parts, never a file or the network: the
// loader refuses every external reference before anything is read.
func TestCompileRefusesExternalRefs(t *testing.T) {
	for _, ref := range []string{
		"https://example.com/schema.json",
		"http://127.0.0.1:1/schema.json",
		"file:///etc/passwd",
		"/etc/passwd",
		"other.json#/$defs/x",
	} {
		_, err := Compile([]byte(`{"type":"object","properties":{"a":{"$ref":"`+ref+`"}}}`), true)
		if err == nil || !strings.Contains(err.Error(), "not allowed") {
			t.Errorf("$ref %q: err = %v, want a refusal", ref, err)
		}
	}
	s, err := Compile([]byte(`{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`), true)
	if err != nil {
		t.Fatalf("local $ref: %v", err)
	}
	if err := s.ValidateJSON([]byte(`{"a":1}`), true); err != nil {
		t.Errorf("local $ref, valid document: %v", err)
	}
	if err := s.ValidateJSON([]byte(`{"a":"x"}`), true); err == nil {
		t.Error("local $ref, invalid document: accepted")
	}
}
