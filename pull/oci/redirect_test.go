package oci

import (
	"errors"
	"net/http"
	"testing"
)

func TestCheckRedirect(t *testing.T) {
	blob := "/v2/tools/echo/blobs/sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := []struct {
		from, to string
		ok       bool
	}{
		{"https://reg.example" + blob, "https://reg.example/other" + blob, true},                   // same origin
		{"https://reg.example" + blob, "https://cdn.example/x?sig=1", true},                        // a blob to storage, over HTTPS
		{"https://reg.example" + blob, "http://cdn.example/x", false},                              // …not over plain HTTP
		{"https://reg.example/v2/tools/echo/manifests/v1", "https://cdn.example/x", false},         // a manifest: never
		{"http://127.0.0.1:5000" + blob, "http://localhost:5000" + blob, false},                    // another host name
		{"https://reg.example:443/v2/tools/echo/manifests/v1", "https://reg.example:8443/", false}, // another port
	}
	for _, c := range cases {
		first, _ := http.NewRequest(http.MethodGet, c.from, nil)
		next, _ := http.NewRequest(http.MethodGet, c.to, nil)
		next.Header.Set("Authorization", "Bearer secret")
		err := checkRedirect(next, []*http.Request{first})
		if (err == nil) != c.ok {
			t.Errorf("%s → %s: %v", c.from, c.to, err)
		}
		var re *RedirectError
		if err != nil && !errors.As(err, &re) {
			t.Errorf("%s → %s: %T", c.from, c.to, err)
		}
		if err == nil && !sameOrigin(first, next) && next.Header.Get("Authorization") != "" {
			t.Errorf("%s → %s: credentials follow the redirect", c.from, c.to)
		}
	}
}
