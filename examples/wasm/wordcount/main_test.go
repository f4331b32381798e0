package main

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		text string
		want Out
	}{
		{"", Out{}},
		{"one", Out{Words: 1, Bytes: 3}},
		{"  two  words\n", Out{Words: 2, Lines: 1, Bytes: 13}},
		{"a\tb\vc\fd\re\nf", Out{Words: 6, Lines: 1, Bytes: 11}},
		{"héllo wörld\n\n", Out{Words: 2, Lines: 2, Bytes: 15}},
		{"\n\n\n", Out{Lines: 3, Bytes: 3}},
	} {
		if got := count(c.text); got != c.want {
			t.Errorf("count(%q) = %+v, want %+v", c.text, got, c.want)
		}
	}
}
