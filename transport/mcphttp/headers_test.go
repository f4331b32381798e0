package mcphttp

import (
	"encoding/json"
	"strings"
	"testing"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func TestHeaderChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	call := func(args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":` + args + `,` + meta("") + `}}`
	}
	base := modern("tools/call", "region")
	cases := []struct {
		name string
		hdr  map[string]string
		body string
		ok   bool
		want string // in the error message
	}{
		{"plain", with(base, "Mcp-Param-Region", "eu-west1"), call(`{"region":"eu-west1"}`), true, ""},
		{"header name case", with(base, "mcp-param-region", "eu", "mcp-method", "tools/call"), call(`{"region":"eu"}`), true, ""},
		{"whitespace around value", with(base, "Mcp-Param-Region", "eu", "Mcp-Name", "  region  "), call(`{"region":"eu"}`), true, ""},
		{"base64 value", with(base, "Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="), call(`{"region":"Hello, 世界"}`), true, ""},
		{"base64 name", with(base, "Mcp-Param-Region", "x", "Mcp-Name", "=?base64?cmVnaW9u?="), call(`{"region":"x"}`), true, ""},
		{"literal without suffix", with(base, "Mcp-Param-Region", "=?base64?SGVsbG8="), call(`{"region":"=?base64?SGVsbG8="}`), true, ""},
		{"integer numerically", with(base, "Mcp-Param-Region", "a", "Mcp-Param-Count", "42.0"), call(`{"region":"a","count":42}`), true, ""},
		{"boolean", with(base, "Mcp-Param-Region", "a", "Mcp-Param-Strict", "false"), call(`{"region":"a","strict":false}`), true, ""},
		{"nested", with(base, "Mcp-Param-Region", "a", "Mcp-Param-Zone", "z1"), call(`{"region":"a","where":{"zone":"z1"}}`), true, ""},
		{"null argument expects no header", with(base, "Mcp-Param-Region", "a"), call(`{"region":"a","count":null}`), true, ""},
		{"invalid annotation ignored", with(base, "Mcp-Param-Region", "a"), call(`{"region":"a","ratio":1.5}`), true, ""},

		{"method mismatch", with(base, "Mcp-Method", "prompts/get", "Mcp-Param-Region", "a"), call(`{"region":"a"}`), false, "Mcp-Method"},
		{"method case", with(base, "Mcp-Method", "TOOLS/CALL", "Mcp-Param-Region", "a"), call(`{"region":"a"}`), false, "Mcp-Method"},
		{"method missing", with(base, "Mcp-Method", "", "Mcp-Param-Region", "a"), call(`{"region":"a"}`), false, "Mcp-Method"},
		{"name mismatch", with(base, "Mcp-Name", "wrong_tool_name", "Mcp-Param-Region", "a"), call(`{"region":"a"}`), false, "Mcp-Name"},
		{"name missing", with(base, "Mcp-Name", "", "Mcp-Param-Region", "a"), call(`{"region":"a"}`), false, "Mcp-Name"},
		{"param mismatch", with(base, "Mcp-Param-Region", "us"), call(`{"region":"eu"}`), false, "Mcp-Param-Region"},
		{"param missing", base, call(`{"region":"eu"}`), false, "Mcp-Param-Region"},
		{"param without argument", with(base, "Mcp-Param-Region", "eu", "Mcp-Param-Count", "3"), call(`{"region":"eu"}`), false, "Mcp-Param-Count"},
		{"bad base64 padding", with(base, "Mcp-Param-Region", "=?base64?SGVsbG8?="), call(`{"region":"Hello"}`), false, "Mcp-Param-Region"},
		{"bad base64 chars", with(base, "Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="), call(`{"region":"Hello"}`), false, "Mcp-Param-Region"},
		{"integer mismatch", with(base, "Mcp-Param-Region", "a", "Mcp-Param-Count", "0x2a"), call(`{"region":"a","count":42}`), false, "Mcp-Param-Count"},
		{"boolean case", with(base, "Mcp-Param-Region", "a", "Mcp-Param-Strict", "True"), call(`{"region":"a","strict":true}`), false, "Mcp-Param-Strict"},
		{"non-ASCII plain value", with(base, "Mcp-Param-Region", "é"), call(`{"region":"é"}`), false, "Mcp-Param-Region"},
		{"version mismatch", with(base, "MCP-Protocol-Version", "2026-07-28", "Mcp-Param-Region", "a"),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":{"region":"a"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			false, "MCP-Protocol-Version"},
	}
	for _, c := range cases {
		r := e.post(c.hdr, c.body)
		if c.ok {
			if r.status != 200 || r.errorCode(t) != 0 {
				t.Errorf("%s: want success, got %d %s", c.name, r.status, r.body)
			}
			continue
		}
		if r.status != 400 || r.errorCode(t) != -32020 {
			t.Errorf("%s: want 400 -32020, got %d %s", c.name, r.status, r.body)
			continue
		}
		msg := r.msg(t)["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, c.want) || r.msg(t)["id"].(float64) != 1 {
			t.Errorf("%s: message %q does not name %s (or id lost)", c.name, msg, c.want)
		}
	}
	// Mcp-Name carries params.uri for resources/read and params.name for
	// prompts/get; a mismatch is refused before the lookup.
	r := e.post(modern("resources/read", "file:///b"), `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a",`+meta("")+`}}`)
	if r.status != 400 || r.errorCode(t) != -32020 {
		t.Fatalf("resources/read: %d %s", r.status, r.body)
	}
	r = e.post(modern("prompts/get", "b"), `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"a",`+meta("")+`}}`)
	if r.status != 400 || r.errorCode(t) != -32020 {
		t.Fatalf("prompts/get: %d %s", r.status, r.body)
	}
}

func TestNumberSyntax(t *testing.T) {
	for _, s := range []string{"0", "-7", "42", "42.0", "1e3", "1.5E-2"} {
		if !jsonNumber(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"", "-", "0x10", "Inf", "NaN", "1_000", "1.", ".5", "1e", "+1", " 1"} {
		if jsonNumber(s) {
			t.Errorf("%q accepted", s)
		}
	}
	if !numberEqual("42.0", "42") || numberEqual("42", "43") {
		t.Fatal("numberEqual")
	}
}
