package main

import (
	"strings"
	"testing"
)

func TestHash(t *testing.T) {
	cases := []struct{ alg, enc, want string }{
		{"sha256", "", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"},
		{"sha1", "hex", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"},
		{"md5", "hex", "5d41402abc4b2a76b9719d911017c592"},
		{"SHA256", "base64", "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="},
		{"sha512", "hex", "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"},
	}
	for _, c := range cases {
		out, err := hashText(nil, HashIn{Algorithm: c.alg, Text: "hello", Encoding: c.enc})
		if err != nil || out.Digest != c.want || out.Bytes != 5 {
			t.Errorf("%s/%s: %+v %v", c.alg, c.enc, out, err)
		}
	}
	if _, err := hashText(nil, HashIn{Algorithm: "crc32", Text: "x"}); err == nil || !strings.Contains(err.Error(), "unknown algorithm") {
		t.Errorf("crc32: %v", err)
	}
	if _, err := hashText(nil, HashIn{Algorithm: "md5", Encoding: "octal"}); err == nil {
		t.Error("octal: no error")
	}
}

func TestTranscode(t *testing.T) {
	cases := []struct{ scheme, dir, text, want string }{
		{"base64", "encode", "héllo?", "aMOpbGxvPw=="},
		{"base64", "decode", "aMOpbGxvPw==", "héllo?"},
		{"base64url", "encode", "héllo?", "aMOpbGxvPw"},
		{"base64url", "decode", "aMOpbGxvPw==", "héllo?"},
		{"base32", "encode", "hi", "NBUQ===="},
		{"base32", "decode", "nbuq====", "hi"},
		{"hex", "encode", "hi", "6869"},
		{"hex", "decode", " 6869\n", "hi"},
		{"url", "encode", "a b&c=d/é", "a+b%26c%3Dd%2F%C3%A9"},
		{"url", "decode", "a+b%26c", "a b&c"},
	}
	for _, c := range cases {
		got, err := transcode(nil, TranscodeIn{Scheme: c.scheme, Direction: c.dir, Text: c.text})
		if err != nil || got != c.want {
			t.Errorf("%s %s %q: %q %v, want %q", c.scheme, c.dir, c.text, got, err, c.want)
		}
	}
	errs := []struct{ scheme, dir, text, want string }{
		{"base64", "decode", "abc$", "invalid base64 input: illegal base64 data at input byte 3"},
		{"hex", "decode", "abc", "invalid hex input: odd number of hex digits (3)"},
		{"hex", "decode", "zz", "invalid hex input"},
		{"url", "decode", "%zz", "invalid url input"},
		{"hex", "decode", "ff00", "not UTF-8 text; its hex form is ff00"},
		{"rot13", "encode", "x", "unknown scheme"},
		{"hex", "sideways", "x", "unknown direction"},
	}
	for _, c := range errs {
		_, err := transcode(nil, TranscodeIn{Scheme: c.scheme, Direction: c.dir, Text: c.text})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s %q: %v, want %q", c.scheme, c.dir, c.text, err, c.want)
		}
	}
}
