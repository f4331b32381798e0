package guest

import (
	"encoding/json"
	"fmt"

	"github.com/wasmcp/wasmcp/abi"
)

// HTTPRequest is an outbound HTTP request made through the host (ABI 1.1,
// wasmcp/http). The sub-package guesthttp wraps it as an http.RoundTripper
// so ordinary net/http code works.
type HTTPRequest = abi.HTTPRequest

// HTTPResponse is the host's answer to an HTTPRequest, after the redirects
// the host followed.
type HTTPResponse = abi.HTTPResponse

// HTTPError is an outbound request the host did not complete: refused by
// the module's policy, a DNS failure, a timeout, a body too large, a TLS
// error. Reason is one of the abi.HTTP* reasons ("policy_refused", "dns",
// "connect", "timeout", "too_large", "tls", "protocol", "invalid_request").
type HTTPError struct {
	Reason  string
	Message string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("guest: HTTP request failed (%s): %s", e.Reason, e.Message)
}

// HTTP makes an outbound HTTP request through the host. What the module may
// reach is its policy's business (NAME.policy.toml, [http]): a module
// without a grant gets an *HTTPError with Reason "policy_refused"; a host
// without ABI 1.1 answers a *ClientError with code -32601. The response's
// body is in Body when it is UTF-8 text, in BodyBase64 otherwise.
//
// Under MCP 2026-07-28 a call that asks the client for input runs again
// from the start once the answers arrive: a request made before the
// question is made again (see abi/README.md, "Outbound HTTP").
func (c *Context) HTTP(req *HTTPRequest) (*HTTPResponse, error) {
	var resp HTTPResponse
	err := c.request(abi.MethodHTTP, req, &resp)
	if ce, ok := err.(*ClientError); ok && ce.Code == abi.CodeHTTPFailed {
		var d abi.HTTPErrorData
		_ = json.Unmarshal(ce.Data, &d)
		return nil, &HTTPError{Reason: d.Reason, Message: ce.Message}
	}
	if err != nil {
		return nil, err
	}
	return &resp, nil
}
