package abi

// MinorVersion is the minor version of the ABI this package describes:
// 1.1 adds outbound HTTP (MethodHTTP). A minor version only adds; a guest
// written for 1.0 runs unchanged on a 1.1 host.
const MinorVersion = 1

// FeatureHTTP is the feature a host lists in DescribeParams.Features when it
// understands MethodHTTP. Whether a module may reach anything is its
// policy's business: a host that lists the feature still refuses every
// destination the module's policy does not allow.
const FeatureHTTP = "http"

// MethodHTTP is the request a guest sends (on stdout, with an id of its
// choosing) to make an outbound HTTP request through the host. Params are an
// HTTPRequest; the host answers on stdin with an HTTPResponse result, or an
// error with code CodeHTTPFailed and data HTTPErrorData.
const MethodHTTP = "wasmcp/http"

// CodeHTTPFailed is the JSON-RPC error code of a MethodHTTP request the host
// did not complete; the error's data is an HTTPErrorData naming the reason.
const CodeHTTPFailed = -32040

// Reasons a MethodHTTP request fails (HTTPErrorData.Reason).
const (
	// HTTPPolicyRefused: the policy does not allow the destination, the
	// method, a header, or the request would pass a per-call limit (count,
	// bytes out, concurrency); also a redirect to a destination outside the
	// allow-list, and an address the SSRF guard refuses.
	HTTPPolicyRefused = "policy_refused"
	// HTTPInvalid: the request itself is malformed (bad URL, bad method,
	// CR/LF in a header, bad base64).
	HTTPInvalid = "invalid_request"
	// HTTPDNS: the host name did not resolve.
	HTTPDNS = "dns"
	// HTTPConnect: no connection could be made (refused, unreachable).
	HTTPConnect = "connect"
	// HTTPTimeout: the request's timeout or the call's deadline passed.
	HTTPTimeout = "timeout"
	// HTTPTooLarge: the response body passed the bytes-in limit.
	HTTPTooLarge = "too_large"
	// HTTPTLS: the TLS handshake failed (certificate not trusted, wrong
	// name, protocol error).
	HTTPTLS = "tls"
	// HTTPProtocol: the server broke HTTP, or too many redirects.
	HTTPProtocol = "protocol"
)

// HTTPRequest is the params of a MethodHTTP request.
type HTTPRequest struct {
	// Method is the HTTP method; empty means GET.
	Method string `json:"method,omitempty"`
	// URL is an absolute http or https URL, without userinfo.
	URL string `json:"url"`
	// Headers are the request's headers, each name with its values.
	Headers map[string][]string `json:"headers,omitempty"`
	// Body is the request body as UTF-8 text. At most one of Body and
	// BodyBase64 is set.
	Body string `json:"body,omitempty"`
	// BodyBase64 is the request body, base64 (standard, padded).
	BodyBase64 string `json:"bodyBase64,omitempty"`
	// TimeoutMs bounds the request, redirects included, in milliseconds; 0
	// means the policy's per-request timeout, which also caps it.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// HTTPResponse is the result of a MethodHTTP request.
type HTTPResponse struct {
	// Status is the HTTP status code of the last response (after the
	// redirects the host followed).
	Status int `json:"status"`
	// URL is the URL that answered, after redirects.
	URL string `json:"url"`
	// Headers are the response's headers.
	Headers map[string][]string `json:"headers"`
	// Body is the response body when it is valid UTF-8.
	Body string `json:"body,omitempty"`
	// BodyBase64 is the response body, base64, when it is not valid UTF-8.
	BodyBase64 string `json:"bodyBase64,omitempty"`
}

// HTTPErrorData is the data of a CodeHTTPFailed error.
type HTTPErrorData struct {
	// Reason is one of the HTTP* reason constants.
	Reason string `json:"reason"`
}
