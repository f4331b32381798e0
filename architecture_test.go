package wasmcp_test

// This file keeps ARCHITECTURE.md and the design pages (docs/design/*.md)
// true: every Go or WAT file they name must exist, every package-qualified
// or type-qualified Go name they name must be declared, and a name written
// beside a file ("`file.go` `Name`" or "`Name` (`file.go`)") must be
// declared in that file.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// decls is what the repository's Go sources declare.
type decls struct {
	files   map[string]bool            // slash paths from the root
	byBase  map[string][]string        // base name → paths
	inFile  map[string]map[string]bool // path → "Name" and "Type.Member"
	inPkg   map[string]map[string]bool // package name → "Name" and "Type.Member"
	members map[string]map[string]bool // type name → member names (methods, fields, JSON tags)
}

func scanRepo(t *testing.T) *decls {
	t.Helper()
	d := &decls{
		files:   map[string]bool{},
		byBase:  map[string][]string{},
		inFile:  map[string]map[string]bool{},
		inPkg:   map[string]map[string]bool{},
		members: map[string]map[string]bool{},
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if n := e.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		path = filepath.ToSlash(path)
		d.files[path] = true
		d.byBase[e.Name()] = append(d.byBase[e.Name()], path)
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]bool{}
		d.inFile[path] = names
		pkg := f.Name.Name
		if d.inPkg[pkg] == nil {
			d.inPkg[pkg] = map[string]bool{}
		}
		add := func(name string) {
			names[name] = true
			d.inPkg[pkg][name] = true
		}
		member := func(typ, name string) {
			add(typ + "." + name)
			if strings.HasSuffix(path, "_test.go") {
				// A test's own types (a table of cases) do not make
				// `table.grow`, a WebAssembly instruction, a Go name.
				return
			}
			if d.members[typ] == nil {
				d.members[typ] = map[string]bool{}
			}
			d.members[typ][name] = true
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					add(decl.Name.Name)
					continue
				}
				member(recvName(decl.Recv.List[0].Type), decl.Name.Name)
			case *ast.GenDecl:
				for _, s := range decl.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s.Name.Name)
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									member(s.Name.Name, n.Name)
								}
								if fld.Tag != nil {
									tag := reflect.StructTag(strings.Trim(fld.Tag.Value, "`")).Get("json")
									if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" {
										member(s.Name.Name, name)
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(n.Name)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

var (
	codeSpan  = regexp.MustCompile("`([^`\n]+)`")
	fileRef   = regexp.MustCompile(`^[\w./-]+\.(go|wat)$`)
	goName    = regexp.MustCompile(`^[A-Za-z_]\w*(\.\(\*\w+\))?(\.\w+){0,2}$`)
	nameFile  = regexp.MustCompile("`([A-Za-z_][\\w.()*]*)`\\s+\\(`([\\w./-]+\\.go)`")
	fileName  = regexp.MustCompile("`([\\w./-]+\\.go)`\\s+`([A-Za-z_][\\w.()*]*)`")
	receivers = regexp.MustCompile(`\(\*(\w+)\)`)
)

// resolveFile finds the file a reference names: a path from the root, or a
// base name, preferring the directory of the last full path named before it.
func (d *decls) resolveFile(ref, ctxDir string) string {
	if strings.Contains(ref, "/") {
		if d.files[ref] {
			return ref
		}
		return ""
	}
	if ctxDir != "" && d.files[ctxDir+"/"+ref] {
		return ctxDir + "/" + ref
	}
	if paths := d.byBase[ref]; len(paths) > 0 {
		return paths[0]
	}
	return ""
}

// declared reports whether a Go name like "pkg.Name", "Type.Member",
// "pkg.Type.Member" or "pkg.(*T).m" is declared; known is false when the
// name's head is neither a project package nor a project type (a standard
// library name, a JSON path, a wasm instruction).
func (d *decls) declared(name string) (ok, known bool) {
	name = receivers.ReplaceAllString(name, "$1")
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return false, false
	}
	if pkg, isPkg := d.inPkg[parts[0]]; isPkg && parts[0] != "main" {
		return pkg[strings.Join(parts[1:], ".")], true
	}
	if m, isType := d.members[parts[0]]; isType && len(parts) == 2 {
		return m[parts[1]], true
	}
	return false, false
}

func TestArchitectureNamesExist(t *testing.T) {
	d := scanRepo(t)
	docs, err := filepath.Glob("docs/design/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("docs/design holds no page")
	}
	index, err := os.ReadFile("docs/design/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range append([]string{"ARCHITECTURE.md"}, docs...) {
		checkNames(t, d, filepath.ToSlash(doc))
		if base := filepath.Base(doc); strings.HasPrefix(doc, "docs") && base != "README.md" && !strings.Contains(string(index), "]("+base+")") {
			t.Errorf("docs/design/README.md does not list %s", base)
		}
	}
}

// checkNames checks the names one document writes in code spans.
func checkNames(t *testing.T, d *decls, doc string) {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	ctxDir := ""
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		ref := m[1]
		switch {
		case fileRef.MatchString(ref):
			p := d.resolveFile(ref, ctxDir)
			if p == "" {
				t.Errorf("%s names %s, which does not exist", doc, ref)
				continue
			}
			if strings.Contains(ref, "/") {
				ctxDir = filepath.ToSlash(filepath.Dir(p))
			}
		case goName.MatchString(ref) && strings.Contains(ref, "."):
			if ok, known := d.declared(ref); known && !ok {
				t.Errorf("%s names %s, which is not declared", doc, ref)
			}
		}
	}
	check := func(name, file string, at int) {
		ctx := "" // the directory of the last full path named before the pair
		for _, m := range codeSpan.FindAllStringSubmatch(text[:at], -1) {
			if fileRef.MatchString(m[1]) && strings.Contains(m[1], "/") {
				ctx = filepath.ToSlash(filepath.Dir(m[1]))
			}
		}
		p := d.resolveFile(file, ctx)
		if p == "" {
			return // reported above
		}
		short := receivers.ReplaceAllString(name, "$1")
		if parts := strings.Split(short, "."); len(parts) == 3 { // pkg.Type.Member
			short = parts[1] + "." + parts[2]
		} else if len(parts) == 2 {
			if _, isPkg := d.inPkg[parts[0]]; isPkg && !d.inFile[p][short] {
				short = parts[1]
			}
		}
		if !d.inFile[p][short] {
			t.Errorf("%s places %s in %s, which does not declare it", doc, name, p)
		}
	}
	for _, m := range fileName.FindAllStringSubmatchIndex(text, -1) {
		check(text[m[4]:m[5]], text[m[2]:m[3]], m[0])
	}
	for _, m := range nameFile.FindAllStringSubmatchIndex(text, -1) {
		check(text[m[2]:m[3]], text[m[4]:m[5]], m[0])
	}
}

// TestArchitecturePackageTable checks the package table of ARCHITECTURE.md
// against the tree: every package it names exists, and every directory
// holding Go files has a row (a name ending in "/..." covers its tree).
func TestArchitecturePackageTable(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "| package | job | knows nothing of |")
	if start < 0 {
		t.Fatal("ARCHITECTURE.md has no package table")
	}
	exact, trees := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(text[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		first := strings.Split(line, "|")[1]
		for _, m := range codeSpan.FindAllStringSubmatch(first, -1) {
			name := m[1]
			if dir, ok := strings.CutSuffix(name, "/..."); ok {
				trees[dir] = true
				name = dir
			} else {
				exact[name] = true
			}
			if st, err := os.Stat(name); err != nil || !st.IsDir() {
				t.Errorf("ARCHITECTURE.md's package table names %s, which is no directory", m[1])
			}
		}
	}
	dirs := map[string]bool{}
	err = filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if n := e.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			dirs[filepath.ToSlash(filepath.Dir(path))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range dirs {
		covered := exact[dir]
		for d := dir; !covered && d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			covered = trees[d]
		}
		if !covered {
			t.Errorf("ARCHITECTURE.md's package table has no row for %s", dir)
		}
	}
}

// TestArchitectureCellsAreRules checks that every "knows nothing of" cell
// of the package table is the text of a rule of deps_test.go, which
// TestLayering enforces.
func TestArchitectureCellsAreRules(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("deps_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, m := range regexp.MustCompile(`rule: "([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		rules = append(rules, m[1])
	}
	text := string(doc)
	start := strings.Index(text, "| package | job | knows nothing of |")
	if start < 0 {
		t.Fatal("ARCHITECTURE.md has no package table")
	}
	for _, line := range strings.Split(text[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cols := strings.Split(line, "|")
		if len(cols) < 5 {
			t.Errorf("ARCHITECTURE.md's package table: %q has no three columns", line)
			continue
		}
		cell := strings.TrimSpace(strings.ReplaceAll(cols[3], "`", ""))
		if cell == "—" {
			continue
		}
		pkg := ""
		if m := codeSpan.FindStringSubmatch(cols[1]); m != nil {
			pkg = strings.TrimSuffix(m[1], "/...")
		}
		found := false
		for _, r := range rules {
			if (strings.HasSuffix(r, " knows nothing of "+cell) && strings.HasPrefix(r, pkg+" ")) ||
				(strings.HasSuffix(r, " know nothing of "+cell) && strings.HasPrefix(r, "the ")) {
				found = true
			}
		}
		if !found {
			t.Errorf("ARCHITECTURE.md says %s knows nothing of %q, and no rule of deps_test.go says so", pkg, cell)
		}
	}
}

// TestCommandLineIsThin: cmd/wasmcp is the command line only — flag
// parsing, printing and calls into server/, pull/ and its internal
// packages — at most 1,500 lines of non-test Go (issue 35). What grows
// past that is behaviour and goes into a package.
func TestCommandLineIsThin(t *testing.T) {
	files, err := filepath.Glob("cmd/wasmcp/*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines > 1500 {
		t.Fatalf("cmd/wasmcp has %d lines of non-test Go; at most 1,500: move behaviour into a package", lines)
	}
}
