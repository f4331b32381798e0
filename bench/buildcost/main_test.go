package main

import (
	"fmt"
	"sort"
	"testing"
)

// A package shared by two importers is linked only through neither; one
// reached through a single importer goes with it.
func TestThrough(t *testing.T) {
	imports := map[string][]string{
		"main":   {"a", "b"},
		"a":      {"shared", "onlya"},
		"b":      {"shared"},
		"onlya":  {"deep"},
		"shared": nil,
		"deep":   nil,
	}
	got := through("main", imports)
	for p, want := range map[string]string{"a": "[a deep onlya]", "b": "[b]", "shared": "[shared]", "onlya": "[deep onlya]"} {
		only := got[p]
		sort.Strings(only)
		if fmt.Sprint(only) != want {
			t.Errorf("through %s: %v, want %s", p, only, want)
		}
	}
}
