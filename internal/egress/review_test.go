package egress

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// jsonStyles are the ways common servers' JSON encoders escape a string:
// PHP's json_encode escapes "/" as "\/" and nothing of HTML; .NET's
// System.Text.Json escapes + < > & ' as upper-case \u00XX; Go escapes
// < > & as lower-case \u00XX.
func jsonStyles(s string) map[string]string {
	php := strings.ReplaceAll(s, "/", `\/`)
	var net strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`+<>&'`, r) {
			fmt.Fprintf(&net, `\u%04X`, r)
		} else {
			net.WriteRune(r)
		}
	}
	upperGo := strings.NewReplacer("<", `\u003C`, ">", `\u003E`, "&", `\u0026`).Replace(s)
	return map[string]string{"php": php, "dotnet": net.String(), "go upper hex": upperGo,
		"php html": strings.NewReplacer("<", `\u003C`, ">", `\u003E`, "&", `\u0026`, "/", `\/`).Replace(s)}
}

// TestSecretEchoOtherEncoders (outside review): an endpoint whose JSON or
// HTML encoder escapes the token differently from Go's — PHP's "\/",
// .NET's upper-case \u002B, an HTML page's &lt;&amp; — repeats it in a
// form the guest can undo. Before, each of these reached the guest.
func TestSecretEchoOtherEncoders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		w.Header().Set("Content-Type", "text/plain")
		for name, form := range jsonStyles(tok) {
			fmt.Fprintf(w, "%s={\"token\":\"%s\"}\n", name, form)
		}
		fmt.Fprintf(w, "html=<p>%s</p>\n", html.EscapeString(tok))
		fmt.Fprintf(w, "html2=<p>%s</p>\n", strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace(tok))
	}))
	defer srv.Close()
	e := newEnv(t)
	s := e.session(&Policy{Allow: []Rule{secretRule(srv.URL, false)}})
	r, err := do(s, abi.HTTPRequest{URL: srv.URL + "/echo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.Body), "\n") {
		if !strings.Contains(line, Redacted) {
			t.Errorf("not redacted: %s", line)
		}
	}
	// What a guest makes of each line once it undoes the escaping.
	undo := strings.NewReplacer(`\/`, "/", `\u002B`, "+", `\u003C`, "<", `\u003E`, ">", `\u0026`, "&", `\u0027`, "'",
		"&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`, "&#x27;", "'", "&#39;", "'", "&#34;", `"`)
	wantNoSecret(t, "undone", undo.Replace(r.Body))
}
