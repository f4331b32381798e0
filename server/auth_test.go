package server

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// authWith is the default authentication settings changed by set.
func authWith(set func(*AuthConfig)) *AuthConfig {
	a := Defaults().Auth
	if set != nil {
		set(&a)
	}
	return &a
}

func TestAuthCheckLoopback(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:8080", "127.0.0.2:1"} {
		if err := authWith(nil).check(addr, log); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "192.0.2.1:80", "example.com:80"} {
		err := authWith(nil).check(addr, log)
		if err == nil || !strings.Contains(err.Error(), "--allow-unauthenticated") || !strings.Contains(err.Error(), "--auth jwt|introspect") {
			t.Errorf("%s: %v", addr, err)
		}
		if err := authWith(func(a *AuthConfig) { a.AllowUnauthenticated = true }).check(addr, log); err != nil {
			t.Errorf("%s with --allow-unauthenticated: %v", addr, err)
		}
		if err := authWith(func(a *AuthConfig) { a.Provider = "apikey" }).check(addr, log); err != nil {
			t.Errorf("%s with --auth apikey: %v", addr, err)
		}
	}
	if n := strings.Count(logs.String(), "WITHOUT authentication"); n != 5 {
		t.Errorf("%d warnings, want 5:\n%s", n, logs.String())
	}
}

func TestAuthWrapErrors(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		set  func(*AuthConfig)
		want string
	}{
		{func(a *AuthConfig) { a.Provider = "jwt" }, "--auth-issuer"},
		{func(a *AuthConfig) { a.Provider = "apikey" }, "--auth-keys-file"},
		{func(a *AuthConfig) { a.Provider = "basic" }, "--auth-htpasswd"},
		{func(a *AuthConfig) { a.Provider = "forward" }, "--auth-forward-url"},
		{func(a *AuthConfig) { a.Provider = "kerberos" }, "want none, jwt"},
		{func(a *AuthConfig) { a.Provider = "introspect" }, "--auth-introspection-url"},
		{func(a *AuthConfig) {
			a.Provider, a.IntrospectionURL, a.ClientSecretFile = "introspect", "http://127.0.0.1:1/i", "/nonexistent/secret"
		}, "--auth-client-secret-file"},
		{func(a *AuthConfig) { a.Provider, a.KeysFile = "apikey", "/nonexistent/keys" }, "no such file"},
		{func(a *AuthConfig) { a.Provider, a.Issuer, a.Algorithms = "jwt", "https://as.example", "HS256" }, "not allowed"},
		{func(a *AuthConfig) {
			a.Provider, a.ForwardURL, a.Resource = "forward", "http://127.0.0.1:1/x", "not a url"
		}, "--auth-resource"},
	} {
		a := authWith(c.set)
		_, err := a.wrap("127.0.0.1:8080", false, log)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", a, err, c.want)
		}
	}
	if mw, err := authWith(nil).wrap("127.0.0.1:8080", false, log); mw != nil || err != nil {
		t.Errorf("--auth none: %v %v", mw != nil, err)
	}
}
