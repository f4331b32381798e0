// Command fetch is a wasmcp tool module that retrieves a web page through
// the host (ABI 1.1 outbound HTTP) and returns it as readable Markdown:
// HTML is converted with github.com/JohannesKaufmann/html-to-markdown/v2,
// links made absolute; text and JSON come back as they are. What it may
// reach is fetch.policy.toml's business.
package main

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/guesthttp"
	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

// In is the fetch tool's input.
type In struct {
	URL      string `json:"url" jsonschema:"description=The http or https URL to retrieve"`
	Raw      bool   `json:"raw,omitempty" jsonschema:"description=Return HTML as it is instead of Markdown"`
	MaxChars int    `json:"maxChars,omitempty" jsonschema:"description=Cut the text after this many characters (default 20000)"`
}

// init registers the tools and hands the server to package reactor: built
// with -buildmode=c-shared (go run ./examples/wasm/build does), the module
// is a reactor the host runs from a snapshot of this start-up, as
// docs/writing-tools.md tells a tool author to build a Go tool.
func init() {
	s := guest.New("fetch", "1.0.0")
	guest.AddTool(s, guest.Tool{
		Name:        "fetch",
		Description: "Retrieves a web page and returns its content as Markdown (HTML converted, links absolute) or as text. Only destinations the server's policy allows can be reached.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(true)},
	}, func(c *guest.Context, in In) (string, error) {
		client := guesthttp.Client(c)
		client.Timeout = 20 * time.Second
		req, err := http.NewRequest(http.MethodGet, in.URL, nil)
		if err != nil {
			return "", fmt.Errorf("bad url: %v", err)
		}
		req.Header.Set("Accept", "text/html, text/markdown;q=0.9, text/plain;q=0.8, application/json;q=0.7, */*;q=0.1")
		resp, err := client.Do(req)
		var he *guest.HTTPError
		if errors.As(err, &he) {
			return "", fmt.Errorf("could not fetch %s (%s): %s", in.URL, he.Reason, he.Message)
		}
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode >= 400 {
			return "", fmt.Errorf("%s answered %s", resp.Request.URL, resp.Status)
		}
		text, err := Render(resp.Request.URL, resp.Header.Get("Content-Type"), body, in.Raw)
		if err != nil {
			return "", err
		}
		return Truncate(text, in.MaxChars), nil
	})
	reactor.Serve(s)
}

// main does not run in a reactor.
func main() {}

func ptr[T any](v T) *T { return &v }

// Render turns a response body into text: HTML into Markdown (unless raw),
// other text as it is; binary content is refused.
func Render(base *url.URL, contentType string, body []byte, raw bool) (string, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "" {
		mt = http.DetectContentType(body)
		mt, _, _ = mime.ParseMediaType(mt)
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		if raw {
			return string(body), nil
		}
		md, err := htmltomarkdown.ConvertString(string(body), converter.WithDomain(base.Scheme+"://"+base.Host))
		if err != nil {
			return "", fmt.Errorf("converting the HTML of %s: %v", base, err)
		}
		return strings.TrimSpace(md), nil
	case strings.HasPrefix(mt, "text/"), mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"):
		if !utf8.Valid(body) {
			return "", fmt.Errorf("%s is %s but not UTF-8", base, mt)
		}
		return string(body), nil
	}
	return "", fmt.Errorf("%s is %s, not text this tool can return", base, mt)
}

// Truncate cuts text after max characters (default 20000), saying so.
func Truncate(text string, max int) string {
	if max <= 0 {
		max = 20000
	}
	if utf8.RuneCountInString(text) <= max {
		return text
	}
	r := []rune(text)
	return string(r[:max]) + fmt.Sprintf("\n\n[… cut at %d of %d characters; ask with a larger maxChars for more]", max, len(r))
}
