package main

import "testing"

func TestByteSizeFlag(t *testing.T) {
	var b byteSize
	for in, want := range map[string]int64{"4MiB": 4 << 20, "100": 100, "2k": 2 << 10, "1 GiB": 1 << 30} {
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("%q: %d %v", in, b, err)
		}
	}
	for _, in := range []string{"", "0", "-1", "4TiB", "MiB", "1.5MiB"} {
		if err := b.Set(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
