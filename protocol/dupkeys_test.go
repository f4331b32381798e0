package protocol

import "testing"

// TestAmbiguousParams (outside review): params naming a member twice as
// a case-folding decoder reads names — the host's sonic takes the last,
// a guest whose decoder matches exactly (the C and Rust SDKs) or keeps
// the first reads the other — are refused, so a caller cannot have the
// host check the grant of one tool (or URI, or completed prompt) and the
// guest run another. Before, {"name":"denied","NAME":"allowed"} was
// checked as "allowed" and an exact-match guest ran "denied".
func TestAmbiguousParams(t *testing.T) {
	for _, p := range []string{
		`{"name":"denied","NAME":"allowed"}`,
		`{"name":"denied","name":"allowed"}`,
		`{"name":"denied","n\u0061me":"allowed"}`,
		`{"uri":"file:///denied","Uri":"file:///allowed"}`,
		`{"arguments":{"a":1},"ARGUMENTS":{"a":2},"name":"t"}`,
		`{"_meta":{},"_META":{}}`,
		`{"ref":{"type":"ref/prompt","name":"denied","Name":"allowed"},"argument":{"name":"a","value":""}}`,
		`{"argument":{"name":"a","value":"x","VALUE":"y"}}`,
		"{\"cursor\":\"a\",\"cur\u017for\":\"b\"}",
		`{ "name" : "a" , "Name"` + "\n:" + `"b"}`,
	} {
		if k := ambiguousKey([]byte(p)); k == "" {
			t.Errorf("%s: not refused", p)
		}
	}
	for _, p := range []string{
		`{"name":"t","arguments":{"name":"x","NAME":"y","Name":{"name":1}}}`,
		`{"name":"t","arguments":{"list":[{"name":1},{"name":2}]}}`,
		`{"name":"a\"name\":","arguments":{}}`,
		`{"name":"t","_meta":{"progressToken":1}}`,
		`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"},"context":{"arguments":{"a":"b"}}}`,
		`{}`, `[]`, ``, `{"name":`,
	} {
		if k := ambiguousKey([]byte(p)); k != "" {
			t.Errorf("%s: refused for %q", p, k)
		}
	}
	p := []byte(`{"name":"echo","arguments":{"text":"hello","n":3},"_meta":{"progressToken":1}}`)
	if n := testing.AllocsPerRun(100, func() { ambiguousKey(p) }); n != 0 {
		t.Errorf("allocates %v times", n)
	}
}
