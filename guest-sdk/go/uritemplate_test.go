package guest

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// uriTable is the one table of URI-template cases both matchers are
// tested against, the SDK's and the host's (internal/uritemplate, whose
// tests read this file too).
type uriTable struct {
	Match []struct {
		Template, URI string
		Host, SDK     map[string]string // nil: no match
	}
	Parse []struct {
		Template  string
		Host, SDK string // "ok" or "error"
	}
}

func readURITable(t *testing.T) uriTable {
	t.Helper()
	b, err := os.ReadFile("testdata/uritemplate.json")
	if err != nil {
		t.Fatal(err)
	}
	var tb uriTable
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.Match) == 0 || len(tb.Parse) == 0 {
		t.Fatal("the shared table is empty")
	}
	return tb
}

func TestURITemplateMatch(t *testing.T) {
	for _, c := range readURITable(t).Match {
		tm, err := parseURITemplate(c.Template)
		if err != nil {
			t.Fatalf("%s: %v", c.Template, err)
		}
		got, ok := tm.match(c.URI)
		if ok != (c.SDK != nil) || ok && !reflect.DeepEqual(got, c.SDK) {
			t.Errorf("%s ~ %s: got %v %v, want %v", c.Template, c.URI, got, ok, c.SDK)
		}
	}
}

func TestURITemplateParseErrors(t *testing.T) {
	for _, c := range readURITable(t).Parse {
		if _, err := parseURITemplate(c.Template); (err != nil) != (c.SDK == "error") {
			t.Errorf("%s: %v, want %s", c.Template, err, c.SDK)
		}
	}
	tm, err := parseURITemplate("x://{a}/{b_c.d}/z")
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.varNames(); !reflect.DeepEqual(got, []string{"a", "b_c.d"}) {
		t.Errorf("varNames = %v", got)
	}
}
