package uritemplate

import "testing"

func TestMatch(t *testing.T) {
	cases := []struct {
		tmpl, uri string
		ok        bool
		vars      map[string]string
	}{
		{"test://template/{id}/data", "test://template/123/data", true, map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template//data", false, nil},
		{"test://template/{id}/data", "test://template/123/datax", false, nil},
		{"guide://topics/{topic}", "guide://topics/abi", true, map[string]string{"topic": "abi"}},
		{"a://{x}/b/{y}", "a://1/b/2", true, map[string]string{"x": "1", "y": "2"}},
		{"a://fixed", "a://fixed", true, nil},
		{"a://fixed", "a://fixed2", false, nil},
	}
	for _, c := range cases {
		tp, err := Parse(c.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		vars, ok := tp.Match(c.uri)
		if ok != c.ok {
			t.Errorf("%s ~ %s: ok=%v want %v", c.tmpl, c.uri, ok, c.ok)
		}
		for k, v := range c.vars {
			if vars[k] != v {
				t.Errorf("%s ~ %s: %s=%q want %q", c.tmpl, c.uri, k, vars[k], v)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"", "a://{", "a://{}", "a://{x}{y}", "a://{x/y}"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}
