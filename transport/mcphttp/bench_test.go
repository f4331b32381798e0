package mcphttp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// discard is a reusable ResponseWriter that keeps only the status, so the
// benchmarks count the handler's allocations, not a recorder's.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(code int)        { d.status = code }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }

// SetReadDeadline is there because net/http's writers have it.
func (d *discard) SetReadDeadline(time.Time) error { return nil }

// benchHandler runs one POST through ServeHTTP per iteration.
func benchHandler(b *testing.B, hdr map[string]string, body string, want int) {
	srv := newProtocol()
	h := New(srv, Options{Addr: "127.0.0.1:8080", Logger: quiet})
	defer h.Close()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rd := strings.NewReader(body)
	req.ContentLength = int64(len(body))
	req.Body = io.NopCloser(rd)
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rd.Reset(body)
		clear(w.h)
		w.status = 0
		h.ServeHTTP(w, req)
		if w.status != want {
			b.Fatalf("status %d", w.status)
		}
	}
}

// BenchmarkModernToolsList is the transport and protocol cost of a
// 2026-07-28 request answered without a guest.
func BenchmarkModernToolsList(b *testing.B) {
	benchHandler(b, modern("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta("")+`}}`, 200)
}

// BenchmarkModernToolsCall is the hot path: a 2026-07-28 tools/call
// answered with plain JSON, including the guest's fresh instance.
func BenchmarkModernToolsCall(b *testing.B) {
	benchHandler(b, with(modern("tools/call", "region"), "Mcp-Param-Region", "eu"),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":{"region":"eu"},`+meta("")+`}}`, 200)
}

// BenchmarkLoopbackToolsCall is the same call over a real loopback HTTP
// connection, clients in parallel.
func BenchmarkLoopbackToolsCall(b *testing.B) {
	benchLoopback(b, with(modern("tools/call", "region"), "Mcp-Param-Region", "eu"),
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":{"region":"eu"},`+meta("")+`}}`)
}

// BenchmarkLoopbackToolsList is tools/list over a real loopback HTTP
// connection: the transport's cost without a guest.
func BenchmarkLoopbackToolsList(b *testing.B) {
	benchLoopback(b, modern("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta("")+`}}`)
}

func benchLoopback(b *testing.B, hdr map[string]string, bodyText string) {
	srv := newProtocol()
	ts := httptest.NewUnstartedServer(nil)
	h := New(srv, Options{Addr: ts.Listener.Addr().String(), Logger: quiet})
	ts.Config.Handler = h
	ts.Start()
	defer func() { h.Close(); ts.Close() }()
	body := []byte(bodyText)
	c := ts.Client()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", bytes.NewReader(body))
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := c.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}
