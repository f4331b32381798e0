package mcphttp

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/ast"

	"github.com/wasmcp/wasmcp/internal/headervalue"
	"github.com/wasmcp/wasmcp/protocol"
)

// Canonical keys of the MCP request headers.
const (
	hdrProtocolVersion = "Mcp-Protocol-Version"
	hdrSessionID       = "Mcp-Session-Id"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	hdrLastEventID     = "Last-Event-Id"
)

// checkHeaders compares the 2026-07-28 request headers with the body:
// MCP-Protocol-Version, Mcp-Method, Mcp-Name (params.name, params.uri or
// params.taskId) and the Mcp-Param-* headers the called tool's x-mcp-header
// annotations name. protocol.Server.Handle calls it once the request's
// _meta is known to be well formed; a disagreement is -32020.
func checkHeaders(h http.Header, cat *protocol.Catalog, info protocol.RequestInfo) *protocol.Error {
	if v, err := single(h, hdrProtocolVersion); err != nil {
		return err
	} else if v != info.ProtocolVersion {
		return mismatch("MCP-Protocol-Version", v, info.ProtocolVersion)
	}
	m, err := single(h, hdrMethod)
	if err != nil {
		return err
	}
	if m == "" {
		return missing(hdrMethod)
	}
	if m != info.Method {
		return mismatch(hdrMethod, m, info.Method)
	}
	switch info.Method {
	case "tools/call", "prompts/get", "resources/read", "tasks/get", "tasks/update", "tasks/cancel":
		if info.Name == "" {
			break
		}
		raw, err := single(h, hdrName)
		if err != nil {
			return err
		}
		if raw == "" {
			return missing(hdrName)
		}
		v, derr := headervalue.Decode(raw)
		if derr != nil {
			return invalid(hdrName, derr)
		}
		if v != info.Name {
			return mismatch(hdrName, v, info.Name)
		}
	}
	if info.Method == "tools/call" && cat != nil && !info.Hidden {
		for _, ph := range cat.ParamHeaders(info.Name) {
			if e := checkParam(h, ph, info.Arguments); e != nil {
				return e
			}
		}
	}
	return nil
}

// checkParam compares one Mcp-Param-* header with the argument it mirrors.
func checkParam(h http.Header, ph protocol.ParamHeader, args []byte) *protocol.Error {
	raw, err := single(h, ph.Header)
	if err != nil {
		return err
	}
	_, sent := h[ph.Header]
	var node ast.Node
	if len(args) > 0 {
		path := make([]any, len(ph.Path))
		for i, p := range ph.Path {
			path[i] = p
		}
		node, _ = sonic.Get(args, path...)
	}
	t := node.TypeSafe()
	if t == ast.V_NONE || t == ast.V_ERROR || t == ast.V_NULL {
		if sent {
			return errorf("Header mismatch: %s header is present but the argument %s is not in the body", ph.Header, strings.Join(ph.Path, "."))
		}
		return nil
	}
	if !sent {
		return errorf("Header mismatch: required header %s is missing (the body has argument %s)", ph.Header, strings.Join(ph.Path, "."))
	}
	v, derr := headervalue.Decode(raw)
	if derr != nil {
		return invalid(ph.Header, derr)
	}
	bodyRaw, _ := node.Raw()
	switch t {
	case ast.V_STRING:
		s, _ := node.String()
		if v != s {
			return mismatch(ph.Header, v, s)
		}
	case ast.V_NUMBER:
		if !numberEqual(v, bodyRaw) {
			return mismatch(ph.Header, v, bodyRaw)
		}
	case ast.V_TRUE, ast.V_FALSE:
		if v != bodyRaw {
			return mismatch(ph.Header, v, bodyRaw)
		}
	default:
		return errorf("Header mismatch: argument %s mirrored in %s is not a string, integer or boolean", strings.Join(ph.Path, "."), ph.Header)
	}
	return nil
}

// numberEqual compares a header's decimal number with a JSON number
// numerically (42 equals 42.0).
func numberEqual(header, body string) bool {
	if !jsonNumber(header) {
		return false
	}
	a, err1 := strconv.ParseFloat(header, 64)
	b, err2 := strconv.ParseFloat(body, 64)
	return err1 == nil && err2 == nil && a == b
}

// jsonNumber reports whether s has JSON number syntax (so "0x10", "Inf"
// and "1_000", which strconv accepts, are refused).
func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	return i == len(s)
}

// single returns a header's only value ("" when absent); a header sent
// twice with different values is refused.
func single(h http.Header, key string) (string, *protocol.Error) {
	vs := h[key]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	for _, v := range vs[1:] {
		if v != vs[0] {
			return "", errorf("Header mismatch: %s header is sent more than once with different values", key)
		}
	}
	return vs[0], nil
}

func errorf(format string, args ...any) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeHeaderMismatch, Message: fmt.Sprintf(format, args...)}
}

func mismatch(header, got, want string) *protocol.Error {
	return errorf("Header mismatch: %s header value '%s' does not match body value '%s'", header, clip(got), clip(want))
}

func missing(header string) *protocol.Error {
	return errorf("Header mismatch: required header %s is missing", header)
}

func invalid(header string, err error) *protocol.Error {
	return errorf("Header mismatch: %s: %v", header, err)
}

// clip shortens a value quoted in an error message.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
