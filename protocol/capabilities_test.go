package protocol

import (
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// TestRequiredCapability checks the gate on guest requests against the
// flags parseCaps reads once.
func TestRequiredCapability(t *testing.T) {
	for _, tc := range []struct {
		caps, method, params string
		missing              bool
	}{
		{`{}`, abi.MethodSample, `{}`, true},
		{`{"sampling":{}}`, abi.MethodSample, `{}`, false},
		{`{"sampling":true}`, abi.MethodSample, `{}`, false},
		{`{"sampling":null}`, abi.MethodSample, `{}`, true},
		{`{"sampling":{}}`, abi.MethodSample, `{"tools":[]}`, true},
		{`{"sampling":{"tools":{}}}`, abi.MethodSample, `{"tools":[]}`, false},
		{`{"sampling":{}}`, abi.MethodSample, `{"includeContext":"thisServer"}`, true},
		{`{"sampling":{"context":{}}}`, abi.MethodSample, `{"includeContext":"allServers"}`, false},
		{`{}`, abi.MethodElicit, `{}`, true},
		{`{"elicitation":{}}`, abi.MethodElicit, `{}`, false},
		{`{"elicitation":{"url":{}}}`, abi.MethodElicit, `{}`, true},
		{`{"elicitation":{"url":{},"form":{}}}`, abi.MethodElicit, `{}`, false},
		{`{"elicitation":{}}`, abi.MethodElicit, `{"mode":"url"}`, true},
		{`{"elicitation":{"url":{}}}`, abi.MethodElicit, `{"mode":"url"}`, false},
		{`{}`, abi.MethodListRoots, `{}`, true},
		{`{"roots":{}}`, abi.MethodListRoots, `{}`, false},
	} {
		caps, err := parseCaps([]byte(tc.caps))
		if err != nil {
			t.Fatalf("parseCaps(%s): %v", tc.caps, err)
		}
		r := &request{caps: caps}
		e := r.requiredCapability(tc.method, []byte(tc.params))
		if (e != nil) != tc.missing {
			t.Errorf("caps %s, %s %s: missing = %v, want %v", tc.caps, tc.method, tc.params, e != nil, tc.missing)
		}
		if e != nil && e.Code != abi.CodeMissingCapability {
			t.Errorf("caps %s, %s: code %d", tc.caps, tc.method, e.Code)
		}
	}
}
