package guesthttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

type in struct {
	URL string `json:"url"`
}

// run serves one tools/call of a tool that POSTs to its url argument, with
// hostAnswer preloaded on stdin as the host's answer to the guest's first
// request; it returns what the guest wrote.
func run(t *testing.T, hostAnswer string) []map[string]any {
	t.Helper()
	s := guest.New("t", "1")
	guest.AddTool(s, guest.Tool{Name: "post"}, func(c *guest.Context, a in) (string, error) {
		resp, err := Client(c).Post(a.URL, "application/octet-stream", bytes.NewReader([]byte{0xff, 0}))
		if err != nil {
			var he *guest.HTTPError
			if errors.As(err, &he) {
				return "reason=" + he.Reason, nil
			}
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s %x %s", resp.StatusCode, resp.Header.Get("Content-Type"), b, resp.Request.URL), nil
	})
	lines := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"post","arguments":{"url":"https://api.test/a"}}}` + "\n" + hostAnswer + "\n"
	var out bytes.Buffer
	if err := s.Serve(strings.NewReader(lines), &out); err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func text(t *testing.T, m map[string]any) string {
	t.Helper()
	r, _ := m["result"].(map[string]any)
	c, _ := r["content"].([]any)
	if len(c) == 0 {
		t.Fatalf("no content in %v", m)
	}
	return c[0].(map[string]any)["text"].(string)
}

func TestTransport(t *testing.T) {
	msgs := run(t, `{"jsonrpc":"2.0","id":1,"result":{"status":201,"url":"https://api.test/final","headers":{"Content-Type":["x/y"]},"bodyBase64":"AAEC"}}`)
	if len(msgs) != 2 {
		t.Fatalf("%v", msgs)
	}
	req := msgs[0]
	p := req["params"].(map[string]any)
	if req["method"] != "wasmcp/http" || p["method"] != "POST" || p["url"] != "https://api.test/a" || p["bodyBase64"] != "/wA=" {
		t.Fatalf("request %v", req)
	}
	if h := p["headers"].(map[string]any)["Content-Type"].([]any)[0]; h != "application/octet-stream" {
		t.Fatalf("headers %v", p["headers"])
	}
	if got := text(t, msgs[1]); got != "201 x/y 000102 https://api.test/final" {
		t.Fatalf("got %q", got)
	}
}

func TestTransportError(t *testing.T) {
	msgs := run(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32040,"message":"not in the allow-list","data":{"reason":"policy_refused"}}}`)
	if got := text(t, msgs[1]); got != "reason=policy_refused" {
		t.Fatalf("got %q", got)
	}
}

var _ http.RoundTripper = (*Transport)(nil)
