package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const doc = `{"store":{"books":[{"title":"A","author":"X","price":8.95},{"title":"B","author":"Y","price":12},{"title":"C","author":"Z"}],
"odd.key":{"a b":[1,2,3]}},"n":12345678901234567890}`

func TestQuery(t *testing.T) {
	cases := []struct{ path, want string }{
		{"", `[{"path":"$","value":` + mustCompact(doc) + `}]`},
		{"$.n", `[{"path":"$.n","value":12345678901234567890}]`},
		{"store.books[0].title", `[{"path":"$.store.books[0].title","value":"A"}]`},
		{"store.books[-1].title", `[{"path":"$.store.books[2].title","value":"C"}]`},
		{"store.books[*].price", `[{"path":"$.store.books[0].price","value":8.95},{"path":"$.store.books[1].price","value":12}]`},
		{"store.books[1:].author", `[{"path":"$.store.books[1].author","value":"Y"},{"path":"$.store.books[2].author","value":"Z"}]`},
		{"store.books.length()", `[{"path":"$.store.books.length()","value":3}]`},
		{`$.store["odd.key"]['a b'][:2]`, `[{"path":"$.store[\"odd.key\"][\"a b\"][0]","value":1},{"path":"$.store[\"odd.key\"][\"a b\"][1]","value":2}]`},
		{"store.*.length()", `[{"path":"$.store.books.length()","value":3},{"path":"$.store[\"odd.key\"].length()","value":1}]`},
		{"store.books[0].title.length()", `[{"path":"$.store.books[0].title.length()","value":1}]`},
		{"store.missing", `[]`},
		{"store.books[7]", `[]`},
		{"n.x", `[]`},
	}
	for _, c := range cases {
		out, err := query(nil, QueryIn{JSON: doc, Path: c.path})
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		got, _ := json.Marshal(out.Matches)
		if string(got) != c.want || out.Count != len(out.Matches) {
			t.Errorf("%s:\n got %s\nwant %s", c.path, got, c.want)
		}
	}
}

func TestQueryErrors(t *testing.T) {
	cases := []struct{ json, path, want string }{
		{`{"a":`, "a", "not valid JSON"},
		{`1 2`, "", "more than one JSON value"},
		{`{}`, "a.", "ends with '.'"},
		{`{}`, "a..b", "recursive descent"},
		{`{}`, "a[x]", "is not an integer"},
		{`{}`, "a[1", "missing ]"},
		{`{}`, `a["x`, "unterminated"},
		{`{}`, "a.length().b", "length() must come last"},
	}
	for _, c := range cases {
		_, err := query(nil, QueryIn{JSON: c.json, Path: c.path})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: err %v, want %q", c.json, c.path, err, c.want)
		}
	}
}

func mustCompact(s string) string {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	d.Decode(&v)
	b, _ := json.Marshal(v)
	return string(b)
}
