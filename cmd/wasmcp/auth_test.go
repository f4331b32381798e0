package main

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func parseAuthFlags(t *testing.T, args ...string) *authFlags {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f authFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

func TestAuthCheckLoopback(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for _, addr := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:8080", "127.0.0.2:1"} {
		if err := parseAuthFlags(t).check(addr, log); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "192.0.2.1:80", "example.com:80"} {
		err := parseAuthFlags(t).check(addr, log)
		if err == nil || !strings.Contains(err.Error(), "--allow-unauthenticated") || !strings.Contains(err.Error(), "--auth jwt|introspect") {
			t.Errorf("%s: %v", addr, err)
		}
		if err := parseAuthFlags(t, "--allow-unauthenticated").check(addr, log); err != nil {
			t.Errorf("%s with --allow-unauthenticated: %v", addr, err)
		}
		if err := parseAuthFlags(t, "--auth", "apikey").check(addr, log); err != nil {
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
		args []string
		want string
	}{
		{[]string{"--auth", "jwt"}, "--auth-issuer"},
		{[]string{"--auth", "apikey"}, "--auth-keys-file"},
		{[]string{"--auth", "basic"}, "--auth-htpasswd"},
		{[]string{"--auth", "forward"}, "--auth-forward-url"},
		{[]string{"--auth", "kerberos"}, "want none, jwt"},
		{[]string{"--auth", "introspect"}, "--auth-introspection-url"},
		{[]string{"--auth", "introspect", "--auth-introspection-url", "http://127.0.0.1:1/i", "--auth-client-secret-file", "/nonexistent/secret"}, "--auth-client-secret-file"},
		{[]string{"--auth", "apikey", "--auth-keys-file", "/nonexistent/keys"}, "no such file"},
		{[]string{"--auth", "jwt", "--auth-issuer", "https://as.example", "--auth-algorithms", "HS256"}, "not allowed"},
		{[]string{"--auth", "forward", "--auth-forward-url", "http://127.0.0.1:1/x", "--auth-resource", "not a url"}, "--auth-resource"},
	} {
		_, err := parseAuthFlags(t, c.args...).wrap("127.0.0.1:8080", false, log)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if mw, err := parseAuthFlags(t).wrap("127.0.0.1:8080", false, log); mw != nil || err != nil {
		t.Errorf("--auth none: %v %v", mw != nil, err)
	}
}
