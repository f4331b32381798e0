package host

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/egress"
)

// The cost of an outbound request: BenchmarkHTTPDirect is a Go http.Client
// GET of a loopback server; BenchmarkHTTPGuest the same GET made by a Go
// guest through the host (guest SDK encoding, the wasmcp/http line, the
// host's checks, guard, audit line, the answer line, the guest's
// decoding), b.N requests in one call so instantiation is not counted.
// The difference is the host's overhead per request.

func benchServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello, guest")
	}))
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkHTTPDirect(b *testing.B) {
	srv := benchServer(b)
	c := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Get(srv.URL + "/")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func BenchmarkHTTPGuest(b *testing.B) {
	srv := benchServer(b)
	var logs bytes.Buffer
	m := loadNetprobeB(b, &egress.Policy{Allow: []egress.Rule{serverRuleB(srv.URL)}, Limits: egress.Limits{Requests: 1 << 30, BytesIn: 1 << 40}}, &logs)
	n := b.N
	b.ResetTimer()
	reply, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(fmt.Sprintf(`{"name":"flood","arguments":{"url":%q,"n":%d}}`, srv.URL+"/", n)), nil)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(reply.Result, []byte(`"ok`)) || bytes.Contains(reply.Result, []byte("reason=")) {
		b.Fatalf("%.300s", reply.Result)
	}
}
