package main

import (
	"net/url"
	"strings"
	"testing"
)

func TestRenderHTML(t *testing.T) {
	base, _ := url.Parse("https://en.wikipedia.org/wiki/Go")
	html := `<html><head><title>T</title><script>evil()</script></head><body>
<h1>Go</h1><p>A <b>language</b> with <a href="/wiki/Goroutine">goroutines</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`
	md, err := Render(base, "text/html; charset=utf-8", []byte(html), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Go", "A **language** with [goroutines](https://en.wikipedia.org/wiki/Goroutine).", "- one\n- two"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "evil") {
		t.Errorf("a script reached the text:\n%s", md)
	}
	raw, _ := Render(base, "text/html", []byte(html), true)
	if raw != html {
		t.Error("raw HTML was changed")
	}
}

func TestRenderOthers(t *testing.T) {
	base, _ := url.Parse("https://example.org/x")
	if s, err := Render(base, "application/json", []byte(`{"a":1}`), false); err != nil || s != `{"a":1}` {
		t.Fatalf("%q %v", s, err)
	}
	if _, err := Render(base, "image/png", []byte{0x89, 'P', 'N', 'G'}, false); err == nil {
		t.Fatal("an image was returned as text")
	}
	if s, err := Render(base, "", []byte("<!DOCTYPE html><p>sniffed</p>"), false); err != nil || s != "sniffed" {
		t.Fatalf("sniffed HTML: %q %v", s, err)
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("héllo", 10); got != "héllo" {
		t.Fatal(got)
	}
	if got := Truncate("héllo wörld", 5); !strings.HasPrefix(got, "héllo\n\n[… cut at 5 of 11 characters") {
		t.Fatal(got)
	}
}
