package mcphttp

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/protocol"
)

// TestHiddenToolParamHeaders: a tool the caller may not use has its
// Mcp-Param-* headers left unchecked, so the answer is the unknown tool's,
// not a header error that would tell the tool exists.
func TestHiddenToolParamHeaders(t *testing.T) {
	t.Parallel()
	srv := protocol.NewServer(protocol.Options{Name: "test", Version: "1", Logger: quiet,
		Access: func(ctx context.Context, principal string, mod protocol.Module, kind, name string) bool {
			return name != "region"
		}})
	mod, err := loadGuest()
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := protocol.NewCatalog([]protocol.Module{mod}, quiet)
	srv.SetCatalog(cat)
	ts := httptest.NewUnstartedServer(nil)
	h := New(srv, Options{Addr: ts.Listener.Addr().String(), Logger: quiet})
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })
	e := &env{t: t, srv: srv, h: h, ts: ts, url: ts.URL + "/mcp"}
	call := func(tool string) reply {
		return e.post(modern("tools/call", tool), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"region":"eu"},`+meta("")+`}}`)
	}
	hidden, unknown := call("region"), call("nosuch")
	if strings.Replace(string(hidden.body), "region", "nosuch", 1) != string(unknown.body) || hidden.status != unknown.status {
		t.Fatalf("hidden tool: %d %s; unknown tool: %d %s", hidden.status, hidden.body, unknown.status, unknown.body)
	}
}
