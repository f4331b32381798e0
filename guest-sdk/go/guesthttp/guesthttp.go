// Package guesthttp lets ordinary net/http code run inside a wasmcp guest:
// its Transport sends each request through the host (ABI 1.1, wasmcp/http),
// which checks it against the module's policy, follows redirects to allowed
// destinations, adds the policy's secret headers, and answers with the
// final response. It is a package of its own so that guests that make no
// HTTP requests do not link net/http.
//
//	guest.AddTool(s, guest.Tool{Name: "status"}, func(c *guest.Context, in In) (string, error) {
//		resp, err := guesthttp.Client(c).Get(in.URL)
//		...
//	})
//
// Libraries that take an *http.Client or an http.RoundTripper accept
// Client(c) and &Transport{Ctx: c}; code that uses http.Get and
// http.DefaultClient works after Install(c).
package guesthttp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// Transport is an http.RoundTripper that sends requests through the host.
// The host follows redirects itself (re-checking each hop), so the
// response is the final one; its Request carries the final URL.
type Transport struct {
	// Ctx is the request the guest is serving.
	Ctx *guest.Context
}

// RoundTrip implements http.RoundTripper. The request's context deadline
// becomes the request's timeout (the policy's per-request timeout caps
// it); cancelling the context does not stop a request already sent.
// Errors the host reports are *guest.HTTPError, wrapped.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Ctx == nil {
		return nil, errors.New("guesthttp: Transport has no Ctx")
	}
	hr := &guest.HTTPRequest{Method: req.Method, URL: req.URL.String()}
	if len(req.Header) > 0 {
		hr.Headers = make(map[string][]string, len(req.Header))
		for k, v := range req.Header {
			hr.Headers[k] = v
		}
	}
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("guesthttp: reading the request body: %w", err)
		}
		if utf8.Valid(b) {
			hr.Body = string(b)
		} else {
			hr.BodyBase64 = base64.StdEncoding.EncodeToString(b)
		}
	}
	if d, ok := req.Context().Deadline(); ok {
		ms := time.Until(d).Milliseconds()
		if ms < 1 {
			return nil, req.Context().Err()
		}
		hr.TimeoutMs = ms
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	resp, err := t.Ctx.HTTP(hr)
	if err != nil {
		return nil, err
	}
	var body []byte
	if resp.BodyBase64 != "" {
		if body, err = base64.StdEncoding.DecodeString(resp.BodyBase64); err != nil {
			return nil, fmt.Errorf("guesthttp: the host's body is not base64: %w", err)
		}
	} else {
		body = []byte(resp.Body)
	}
	final := req
	if resp.URL != "" && resp.URL != req.URL.String() {
		if u, err := url.Parse(resp.URL); err == nil {
			final = req.Clone(req.Context())
			final.URL = u
			final.Host = u.Host
		}
	}
	h := make(http.Header, len(resp.Headers))
	for k, v := range resp.Headers {
		h[http.CanonicalHeaderKey(k)] = v
	}
	// The host hands over the decoded body: its length is what counts.
	h.Del("Content-Encoding")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		Status:        strconv.Itoa(resp.Status) + " " + http.StatusText(resp.Status),
		StatusCode:    resp.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       final,
	}, nil
}

// Client returns an *http.Client whose requests go through the host.
func Client(c *guest.Context) *http.Client {
	return &http.Client{Transport: &Transport{Ctx: c}}
}

// Install makes http.DefaultClient (http.Get, http.Post, …) send its
// requests through the host for the request c serves. An instance serves
// one request, so this is safe in a handler.
func Install(c *guest.Context) {
	http.DefaultClient.Transport = &Transport{Ctx: c}
}
