package auth

import (
	"strings"
	"testing"
)

func TestParseAuthorization(t *testing.T) {
	cases := []struct {
		in, scheme, cred string
		ok               bool
	}{
		{"Bearer abc", "bearer", "abc", true},
		{"bearer   abc.def-ghi_~+/==", "bearer", "abc.def-ghi_~+/==", true},
		{"Basic YWxpY2U6cHc=", "basic", "YWxpY2U6cHc=", true},
		{"Bearer", "", "", false},
		{"Bearer ", "", "", false},
		{"", "", "", false},
		{" Bearer abc", "", "", false},
		{"Bearer abc\x00", "", "", false},
		{"Bea(rer abc", "", "", false},
		{"Bearer " + strings.Repeat("a", MaxCredentialBytes+1), "", "", false},
	}
	for _, c := range cases {
		s, cr, ok := ParseAuthorization(c.in)
		if s != c.scheme || cr != c.cred || ok != c.ok {
			t.Errorf("ParseAuthorization(%.40q) = %q, %q, %v", c.in, s, cr, ok)
		}
	}
	for _, bad := range []string{"a b", "abc=def", "=", "abc def", ""} {
		if isToken68(bad) {
			t.Errorf("isToken68(%q) = true", bad)
		}
	}
}

// FuzzParseAuthorization checks the header parser never panics and that
// what it accepts is well formed.
func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{"Bearer abc", "Basic YWxpY2U6cHc=", "Bearer", "bearer a b", "\x00", "Bearer ==", "Negotiate a=b, c=d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		scheme, cred, ok := ParseAuthorization(v)
		if !ok {
			if scheme != "" || cred != "" {
				t.Fatal("refused but returned parts")
			}
			return
		}
		if scheme == "" || cred == "" || len(cred) > MaxCredentialBytes || strings.ToLower(scheme) != scheme {
			t.Fatalf("accepted %q as %q %q", v, scheme, cred)
		}
		if strings.ContainsAny(cred[:1]+cred[len(cred)-1:], " \t") {
			t.Fatalf("credentials %q not trimmed", cred)
		}
		tok, err := bearerToken(v)
		if err == nil && (scheme != "bearer" || !isToken68(tok)) {
			t.Fatalf("bearerToken(%q) = %q", v, tok)
		}
	})
}
