// Command netprobe is a guest for the host's outbound HTTP tests: it makes
// the requests the tests ask for, well-formed or hostile, and reports what
// the host answered.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/guesthttp"
)

type reqIn struct {
	Method  string              `json:"method,omitempty"`
	URL     string              `json:"url"`
	Headers map[string][]string `json:"headers,omitempty"`
	N       int                 `json:"n,omitempty"`
}

// outcome is "status body" for a response, "reason=R" for a host refusal.
func outcome(r *guest.HTTPResponse, err error) string {
	var he *guest.HTTPError
	if errors.As(err, &he) {
		return "reason=" + he.Reason
	}
	if err != nil {
		return "error=" + err.Error()
	}
	return fmt.Sprintf("%d %s%s", r.Status, r.Body, r.BodyBase64)
}

func main() {
	s := guest.New("netprobe", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "raw", Description: "One request through Context.HTTP."},
		func(c *guest.Context, in reqIn) (string, error) {
			return outcome(c.HTTP(&guest.HTTPRequest{Method: in.Method, URL: in.URL, Headers: in.Headers})), nil
		})
	guest.AddTool(s, guest.Tool{Name: "view", Description: "One request through Context.HTTP; everything the guest can read of the answer (URL, headers, body, a gzip body gunzipped), or the error's reason and message."},
		func(c *guest.Context, in reqIn) (string, error) {
			return view(c.HTTP(&guest.HTTPRequest{Method: in.Method, URL: in.URL, Headers: in.Headers})), nil
		})
	guest.AddTool(s, guest.Tool{Name: "get", Description: "http.Get through guesthttp.Install."},
		func(c *guest.Context, in reqIn) (string, error) {
			guesthttp.Install(c)
			resp, err := httpGet(in.URL)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return fmt.Sprintf("%d %s", resp.StatusCode, b), nil
		})
	guest.AddTool(s, guest.Tool{Name: "flood", Description: "n requests; reports each outcome's reason."},
		func(c *guest.Context, in reqIn) (string, error) {
			var out []string
			for i := 0; i < in.N; i++ {
				o := outcome(c.HTTP(&guest.HTTPRequest{URL: in.URL}))
				if strings.HasPrefix(o, "200") {
					o = "ok"
				}
				out = append(out, o)
			}
			return strings.Join(out, ","), nil
		})
	guest.AddTool(s, guest.Tool{Name: "fetch_then_ask", Description: "A request, then a question to the client."},
		func(c *guest.Context, in reqIn) (string, error) {
			first := outcome(c.HTTP(&guest.HTTPRequest{URL: in.URL}))
			res, err := c.Elicit("confirm?", map[string]any{"type": "object", "properties": map[string]any{}})
			if err != nil {
				return "", err
			}
			return first + " then " + res.Action, nil
		})
	s.Run()
}

// view is all a guest can read of an answer, as an attacking guest reads
// it: a body that is gzip is gunzipped (up to four times).
func view(r *guest.HTTPResponse, err error) string {
	var he *guest.HTTPError
	if errors.As(err, &he) {
		return "reason=" + he.Reason + " message=" + he.Message
	}
	if err != nil {
		return "error=" + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "status=%d url=%s\n", r.Status, r.URL)
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Headers[k], ", "))
	}
	body := []byte(r.Body)
	if r.BodyBase64 != "" {
		body, _ = base64.StdEncoding.DecodeString(r.BodyBase64)
	}
	for i := 0; i < 4 && len(body) > 2 && body[0] == 0x1f && body[1] == 0x8b; i++ {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			break
		}
		if body, err = io.ReadAll(zr); err != nil {
			break
		}
		b.WriteString("[gunzipped]\n")
	}
	b.Write(body)
	return b.String()
}
