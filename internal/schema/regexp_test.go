package schema

import (
	"strings"
	"testing"
	"time"
)

// TestECMAPatterns: JSON Schema patterns are ECMA-262, so a lookahead (as
// Zod emits) compiles and applies; a catastrophic pattern is bounded.
func TestECMAPatterns(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"pw":{"type":"string","pattern":"^(?=.*[0-9])(?=.*[a-z]).{8,}$"}}}`), true)
	if err != nil {
		t.Fatalf("a lookahead pattern is refused: %v", err)
	}
	if err := s.ValidateJSON([]byte(`{"pw":"abcdefg1"}`), false); err != nil {
		t.Fatalf("matching value: %v", err)
	}
	if err := s.ValidateJSON([]byte(`{"pw":"abcdefgh"}`), false); err == nil {
		t.Fatal("a value without a digit passed")
	}
	// \d is ASCII in ECMA-262 (RE2 agrees) and \u{…} needs the u flag.
	s, err = Compile([]byte(`{"type":"string","pattern":"^\\u{1F600}\\d$"}`), false)
	if err != nil {
		t.Fatalf("unicode escape: %v", err)
	}
	if err := s.ValidateJSON([]byte(`"😀7"`), false); err != nil {
		t.Fatalf("unicode escape match: %v", err)
	}
	s, err = Compile([]byte(`{"type":"string","pattern":"^(a+)+$"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.ValidateJSON([]byte(`"`+strings.Repeat("a", 40)+`!"`), false)
	if err == nil {
		t.Fatal("a catastrophic match passed")
	}
	if d := time.Since(start); d > 20*MatchTimeout {
		t.Fatalf("a catastrophic match ran %v", d)
	}
}
