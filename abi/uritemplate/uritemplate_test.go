package uritemplate

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
)

// table is testdata/uritemplate.json: each case with the host's answer
// (Parse, Match) and the guest SDK's (ParseStrict, MatchStrict).
type table struct {
	Match []struct {
		Template, URI string
		Host, SDK     map[string]string // nil: no match
	}
	Parse []struct {
		Template  string
		Host, SDK string // "ok" or "error"
	}
}

func readTable(t *testing.T) table {
	t.Helper()
	b, err := os.ReadFile("testdata/uritemplate.json")
	if err != nil {
		t.Fatal(err)
	}
	var tb table
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.Match) == 0 || len(tb.Parse) == 0 {
		t.Fatal("the table is empty")
	}
	return tb
}

// TestMatch: the host's Match gives the table's host answers.
func TestMatch(t *testing.T) {
	for _, c := range readTable(t).Match {
		tp, err := Parse(c.Template)
		if err != nil {
			t.Fatal(err)
		}
		vars, ok := tp.Match(c.URI)
		if want := c.Host != nil; ok != want {
			t.Errorf("%s ~ %s: ok=%v want %v", c.Template, c.URI, ok, want)
			continue
		}
		if ok && !maps.Equal(vars, c.Host) {
			t.Errorf("%s ~ %s: %v, want %v", c.Template, c.URI, vars, c.Host)
		}
	}
}

// TestMatchStrict: the SDK's MatchStrict gives the table's sdk answers.
func TestMatchStrict(t *testing.T) {
	for _, c := range readTable(t).Match {
		tp, err := ParseStrict(c.Template)
		if err != nil {
			t.Fatalf("%s: %v", c.Template, err)
		}
		vars, ok := tp.MatchStrict(c.URI)
		if ok != (c.SDK != nil) || ok && !maps.Equal(vars, c.SDK) {
			t.Errorf("%s ~ %s: got %v %v, want %v", c.Template, c.URI, vars, ok, c.SDK)
		}
	}
}

// TestParseErrors: Parse and ParseStrict refuse what the table says.
func TestParseErrors(t *testing.T) {
	for _, c := range readTable(t).Parse {
		if _, err := Parse(c.Template); (err != nil) != (c.Host == "error") {
			t.Errorf("Parse(%q): %v, want %s", c.Template, err, c.Host)
		}
		if _, err := ParseStrict(c.Template); (err != nil) != (c.SDK == "error") {
			t.Errorf("ParseStrict(%q): %v, want %s", c.Template, err, c.SDK)
		}
	}
}

func TestNames(t *testing.T) {
	tm, err := ParseStrict("x://{a}/{b_c.d}/z")
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.Names(); !slices.Equal(got, []string{"a", "b_c.d"}) {
		t.Errorf("Names = %v", got)
	}
	if got := tm.String(); got != "x://{a}/{b_c.d}/z" {
		t.Errorf("String = %q", got)
	}
}
