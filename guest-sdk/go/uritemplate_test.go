package guest

import (
	"reflect"
	"testing"
)

func TestURITemplateMatch(t *testing.T) {
	cases := []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"x://{id}/data", "x://42/data", map[string]string{"id": "42"}},
		{"x://{id}/data", "x://42/other", nil},
		{"x://{id}/data", "x:///data", nil},                       // a variable is never empty
		{"x://{id}/data", "x://a/b/data", nil},                    // nor contains '/'
		{"x://{id}", "x://a%2Fb", map[string]string{"id": "a/b"}}, // escaped '/' is fine
		{"x://{id}", "x://a%zz", nil},                             // bad escape
		{"x://{id}", "x://a?q=1", nil},
		{"file:///{dir}/{name}.{ext}", "file:///src/main.test.go", map[string]string{"dir": "src", "name": "main.test", "ext": "go"}},
		{"guide://wasmcp/topics/{topic}", "guide://wasmcp/topics/abi", map[string]string{"topic": "abi"}},
		{"guide://wasmcp/topics/{topic}", "guide://wasmcp/topics/", nil},
		{"{scheme}://host", "https://host", map[string]string{"scheme": "https"}},
		{"a-{x}-b", "a-1-2-b", map[string]string{"x": "1-2"}},
		{"x://{a}+{b}", "x://1+2", map[string]string{"a": "1", "b": "2"}},
	}
	for _, c := range cases {
		tm, err := parseURITemplate(c.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", c.tmpl, err)
		}
		got, ok := tm.match(c.uri)
		if ok != (c.want != nil) || ok && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s ~ %s: got %v %v, want %v", c.tmpl, c.uri, got, ok, c.want)
		}
	}
}

func TestURITemplateParseErrors(t *testing.T) {
	for _, bad := range []string{"x://{", "x://}", "x://{}", "x://{+path}", "x://{?q}", "x://{a,b}", "x://{a*}", "x://{a}{b}", "x://{a}/{a}"} {
		if _, err := parseURITemplate(bad); err == nil {
			t.Errorf("%s: parsed, want an error", bad)
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
