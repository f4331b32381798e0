package wasmcp_test

import (
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestInternalHoldsLeaves checks the rule of internal/: it holds leaves,
// the small packages the rooms above share, and no feature of its own.
// A package P under internal/ (internal/testkit's kits included) is a leaf
// when both hold:
//
//  1. P, and P's tests, import no package of this module outside internal/
//     and abi (abi, the host–guest contract, is a module of its own that
//     imports nothing of wasmcp, so it is below everything).
//  2. P is shared or self-contained: at least two packages outside
//     internal/ import it (in their code; a kit's users — P under
//     internal/testkit, or a package named *test — import it in their
//     tests, which count), or P imports no package of this module at all
//     (a self-contained helper one user may keep there, like heapfloor),
//     or P is a program (package main, such as a go generate step) that
//     imports nothing of this module outside its own parent's tree and
//     the leaves.
//
// A feature used by one room only, importing other packages of the module
// (once internal/pulled: the command's alone, over internal/oci and
// internal/signing), belongs in that room, not here.
func TestInternalHoldsLeaves(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not available")
	}
	out, err := exec.Command("go", "list", "-json=ImportPath,Name,Imports,TestImports,XTestImports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath, Name                   string
		Imports, TestImports, XTestImports []string
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	under := func(p, name string) bool { return p == name || strings.HasPrefix(p, name+"/") }
	internal := mod + "/internal"
	isKit := func(p pkg) bool { return under(p.ImportPath, internal+"/testkit") || strings.HasSuffix(p.Name, "test") }
	ours := func(imp string) bool { return under(imp, mod) && !under(imp, mod+"/abi") }

	// Who imports each internal package from outside internal/, by code
	// and by tests.
	byCode, byTests := map[string]map[string]bool{}, map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, imp, from string) {
		if m[imp] == nil {
			m[imp] = map[string]bool{}
		}
		m[imp][from] = true
	}
	for _, p := range pkgs {
		if under(p.ImportPath, internal) {
			continue
		}
		for _, imp := range p.Imports {
			add(byCode, imp, p.ImportPath)
		}
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			add(byTests, imp, p.ImportPath)
		}
	}

	n := 0
	for _, p := range pkgs {
		if !under(p.ImportPath, internal) {
			continue
		}
		n++
		// 1: nothing above.
		mine := false
		for _, imp := range append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...) {
			if under(imp, mod) && !under(imp, internal) && !under(imp, mod+"/abi") {
				t.Errorf("%s imports %s, outside internal/ and abi: internal/ holds leaves", p.ImportPath, imp)
			}
		}
		for _, imp := range p.Imports {
			if ours(imp) {
				mine = true
			}
		}
		// 2: shared, self-contained, or a program of its parent.
		users := map[string]bool{}
		for u := range byCode[p.ImportPath] {
			users[u] = true
		}
		if isKit(p) {
			for u := range byTests[p.ImportPath] {
				users[u] = true
			}
		}
		if len(users) >= 2 || !mine {
			continue
		}
		if p.Name == "main" {
			parent := p.ImportPath[:strings.LastIndex(p.ImportPath, "/")]
			ok := true
			for _, imp := range p.Imports {
				if ours(imp) && !under(imp, parent) && len(byCode[imp]) < 2 {
					ok = false
				}
			}
			if ok {
				continue
			}
		}
		var names []string
		for u := range users {
			names = append(names, strings.TrimPrefix(u, mod+"/"))
		}
		sort.Strings(names)
		t.Errorf("%s imports packages of this module and is used outside internal/ only by %v: a feature of that room, not a leaf (move it there)",
			p.ImportPath, names)
	}
	if n == 0 {
		t.Error("no package under internal/")
	}
}
