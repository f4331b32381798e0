package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// branching is the schema: d<n> is an allOf of two $refs to
// d<n-1>, so applying d<depth> evaluates 2^depth subschemas.
func branching(depth int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","$defs":{"d0":{"type":"object"}`)
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, `,"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	fmt.Fprintf(&b, `},"$ref":"#/$defs/d%d"}`, depth)
	return b.String()
}

func TestPathologicalSchemasRefused(t *testing.T) {
	for _, d := range []int{14, 20, 40} {
		t0 := time.Now()
		_, err := Compile([]byte(branching(d)), true)
		if err == nil || !strings.Contains(err.Error(), "too costly") {
			t.Fatalf("depth %d: %v", d, err)
		}
		if el := time.Since(t0); el > 2*time.Second {
			t.Fatalf("depth %d: refusing took %v", d, el)
		}
	}
	if _, err := Compile([]byte(branching(8)), true); err != nil {
		t.Fatalf("a modest branching schema: %v", err)
	}
	deep := strings.Repeat(`{"properties":{"a":`, MaxDepth) + `{}` + strings.Repeat(`}}`, MaxDepth)
	if _, err := Compile([]byte(deep), false); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("deep schema: %v", err)
	}
	big := `{"type":"object","description":"` + strings.Repeat("x", MaxBytes) + `"}`
	if _, err := Compile([]byte(big), true); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("big schema: %v", err)
	}
	// Recursion is fine: the value's depth bounds it.
	tree := `{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}},"l":{"$ref":"#"},"r":{"$ref":"#"}}}`
	s, err := Compile([]byte(tree), true)
	if err != nil {
		t.Fatalf("recursive schema: %v", err)
	}
	if err := s.ValidateJSON([]byte(`{"kids":[{"l":{}},{"r":{"kids":[]}}]}`), true); err != nil {
		t.Fatal(err)
	}
}

// TestValidationAbandonedAtDeadline: a costly validation of a large value
// returns ErrTimeout once its context ends, not when it finishes.
func TestValidationAbandonedAtDeadline(t *testing.T) {
	// About 3,000 evaluations per element of "a", 80 elements: some
	// 100 ms of work.
	sch := strings.Replace(branching(10), `"type":"object",`, `"type":"object","properties":{"a":{"items":{"$ref":"#/$defs/d10"}}},`, 1)
	s, err := Compile([]byte(sch), true)
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"a":[` + strings.Repeat(`{"b":1},`, 79) + `{}]}`
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err = s.ValidateJSONContext(ctx, 0, []byte(doc), true)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v", err)
	}
	if el := time.Since(t0); el > time.Second {
		t.Fatalf("returned after %v", el)
	}
	t0 = time.Now()
	if err := s.ValidateJSONContext(context.Background(), 5*time.Millisecond, []byte(doc), true); !errors.Is(err, ErrTimeout) {
		t.Fatalf("over budget: %v", err)
	}
	if el := time.Since(t0); el > time.Second {
		t.Fatalf("returned after %v", el)
	}
	// A cheap one runs in place, with no timer, and succeeds.
	cheap, err := Compile([]byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := cheap.ValidateJSONContext(context.Background(), time.Nanosecond, []byte(`{"n":1}`), true); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkBranchingSchema measures what the validator does with the
// issue's schema, the load-time limit bypassed: each level doubles the
// time of one validation (docs/design/guest-output.md, "Limits on what a guest
// writes"): go test ./internal/schema -run x -bench Branching
func BenchmarkBranchingSchema(b *testing.B) {
	for _, d := range []int{10, 14, 16} {
		b.Run(fmt.Sprintf("depth=%d", d), func(b *testing.B) {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(branching(d)))
			if err != nil {
				b.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("mem:///bench.json", doc); err != nil {
				b.Fatal(err)
			}
			sch, err := c.Compile("mem:///bench.json")
			if err != nil {
				b.Fatal(err)
			}
			s := &Schema{s: sch}
			for b.Loop() {
				if err := s.ValidateJSON([]byte(`{"a":1}`), true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
