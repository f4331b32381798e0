package oci_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/wasmcp/wasmcp/pull/oci"
)

// offLoopback is a transport that forwards requests to loopback and, for
// any other host, records the request and answers as a token service
// would, without sending a packet anywhere.
type offLoopback struct {
	mu   sync.Mutex
	seen []string // "http://host/path Authorization-present"
}

func (o *offLoopback) RoundTrip(req *http.Request) (*http.Response, error) {
	h := req.URL.Hostname()
	if h == "127.0.0.1" || h == "localhost" || h == "::1" {
		return http.DefaultTransport.RoundTrip(req)
	}
	o.mu.Lock()
	o.seen = append(o.seen, req.URL.Scheme+"://"+req.URL.Host+req.URL.Path+" auth="+req.Header.Get("Authorization"))
	o.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"token":"t"}`)), Request: req}, nil
}

// TestPlainHTTPStaysOnLoopback: a loopback registry (plain HTTP, allowed)
// names a token service on another host over plain HTTP. oras-go refuses
// an http realm only when the registry was reached over https, so the
// registry's credentials would cross the network in clear. No plain-HTTP
// request may leave loopback without --insecure, whoever asks for it.
func TestPlainHTTPStaysOnLoopback(t *testing.T) {
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="http://auth.registry.example/token",service="registry",scope="repository:tools/echo:pull"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer reg.Close()
	addr := strings.TrimPrefix(reg.URL, "http://")
	for _, insecure := range []bool{false, true} {
		tr := &offLoopback{}
		c, err := oci.New(oci.Options{Transport: tr, Insecure: insecure,
			Credential: auth.StaticCredential(addr, auth.Credential{Username: "u", Password: "s3cret-pw"})})
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := oci.ParseRef(addr + "/tools/echo:v1")
		_, err = c.Resolve(context.Background(), ref)
		if !insecure {
			if len(tr.seen) != 0 {
				t.Fatalf("plain HTTP left loopback without --insecure: %v", tr.seen)
			}
			if err == nil || !strings.Contains(err.Error(), "plain HTTP to auth.registry.example") {
				t.Fatalf("want a plain-HTTP refusal, got %v", err)
			}
			if strings.Contains(err.Error(), "s3cret-pw") {
				t.Fatalf("the error shows the password: %v", err)
			}
		} else if len(tr.seen) == 0 {
			t.Fatalf("with --insecure the token service was not asked (%v): the test no longer exercises the realm", err)
		}
	}
}
