package egress

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// BenchmarkDo is the host's side of one outbound request (checks, guard,
// transport, body, redaction, audit line) against a loopback server; compare
// with BenchmarkDirect, a plain http.Client GET of the same server.
func BenchmarkDo(b *testing.B) { benchDo(b, nil) }

// BenchmarkDoSecret is BenchmarkDo for a rule with a secret header: the
// host adds it and redacts every form of it from the response.
func BenchmarkDoSecret(b *testing.B) {
	benchDo(b, []SecretHeader{{Name: "Authorization", Value: "Bearer 0123456789abcdef0123456789abcdef"}})
}

// benchDo runs one request per iteration through a client whose one rule
// allows a loopback server and adds headers.
func benchDo(b *testing.B, headers []SecretHeader) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello, guest") }))
	defer srv.Close()
	rule := loopRule(srv.URL)
	rule.Headers = headers
	p := &Policy{Allow: []Rule{rule}, Limits: Limits{Requests: 1 << 30, BytesIn: 1 << 40}}
	if err := CheckRule(&p.Allow[0]); err != nil {
		b.Fatal(err)
	}
	c, err := NewClient(p, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s := c.NewSession("bench", 1)
	req := &abi.HTTPRequest{URL: srv.URL + "/"}
	b.ReportAllocs()
	for b.Loop() {
		if _, e := s.Do(context.Background(), req); e != nil {
			b.Fatal(e)
		}
	}
}

func BenchmarkDirect(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello, guest") }))
	defer srv.Close()
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
