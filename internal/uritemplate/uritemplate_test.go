package uritemplate

import (
	"encoding/json"
	"maps"
	"os"
	"testing"
)

// sharedTable is the one table of URI-template cases both matchers are tested
// against, this package's and the Go guest SDK's (which holds the file:
// it is a module of its own and must not read outside itself).
type sharedTable struct {
	Match []struct {
		Template, URI string
		Host, SDK     map[string]string // nil: no match
	}
	Parse []struct {
		Template  string
		Host, SDK string // "ok" or "error"
	}
}

func readTable(t *testing.T) sharedTable {
	t.Helper()
	b, err := os.ReadFile("../../guest-sdk/go/testdata/uritemplate.json")
	if err != nil {
		t.Fatal(err)
	}
	var tb sharedTable
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.Match) == 0 || len(tb.Parse) == 0 {
		t.Fatal("the shared table is empty")
	}
	return tb
}

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

func TestParseErrors(t *testing.T) {
	for _, c := range readTable(t).Parse {
		if _, err := Parse(c.Template); (err != nil) != (c.Host == "error") {
			t.Errorf("Parse(%q): %v, want %s", c.Template, err, c.Host)
		}
	}
}
