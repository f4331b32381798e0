package wasmcp_test

// This file checks the hop lists of ARCHITECTURE.md against the code
// (TestArchitectureHops). A hop list is the path of a request through the
// code, one numbered line per function it crosses, in a "## " section:
//
//	3. `transport/stdio/stdio.go` `readLine` — what it does
//	4. `transport/stdio/stdio.go` `conn.dispatch` (from `conn.read`) — …
//	7. `protocol/tools.go` `request.callTool` (via table `handlers`) — …
//
// The first code span is a Go file, a slash path from the repository's
// root; the second a function or a Type.Method declared in that file. A
// section with one such line is a hop list, and then every numbered line
// in it must be a hop. Everything after the closing parenthesis (or after
// the name) is prose the checker does not read.
//
// What a hop promises: it is reached from the hop on the line before by at
// most maxHopDepth (3) static calls. The parenthesis, when present, says
// otherwise, with clauses separated by ", ":
//
//   - from `Name`: reached from the earlier hop Name instead of the line
//     before (that one returned and Name's function goes on).
//   - via interface `pkg.I`: reached through an interface (of the project,
//     the standard library or a module go.mod requires). The hop's type
//     must implement every method of I, and the caller must call a method
//     of the hop's name within 3 calls. With "through `C`" added, the
//     caller instead hands the implementation to C, which calls it
//     (wazero's WithStdout, net/http's Serve).
//   - via func `F`: reached through a func value. The caller must call a
//     value named F within 3 calls, and the hop must be stored as F
//     somewhere: a field or key F, an assignment to F, or the argument
//     passed for the caller's parameter F.
//   - via table `T`: the caller must look the hop up in the variable T,
//     and T must hold it.
//
// How "a static call" is found: the call graph is built from the
// repository's Go sources with go/ast, with just enough local typing to be
// precise. A call x.M(...) reaches the M of x's type when that type is
// known (the receiver, a parameter, a field of either, a local made by a
// composite literal or by a call whose result type is declared), and
// nothing when it is an interface or another module's type; of an x of
// unknown type it reaches every method named M in the caller's package and
// in the project packages its file imports. pkg.F(...) reaches F of that
// project package. Calls inside a function literal count as calls of the
// function that holds it. So a hop that the code reaches only through an
// interface, a func value or a table must say so, and the checker then
// checks what that clause claims instead.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// maxHopDepth is how many static calls a hop may be from the hop it
// follows.
const maxHopDepth = 3

const modulePath = "github.com/wasmcp/wasmcp"

// funcNode is one function or method declared in the project.
type funcNode struct {
	key    string   // "dir.Name" or "dir.Type.Method"; dir is the package's slash path from the root
	file   string   // the file declaring it
	params []string // parameter names, in order
	calls  []string // keys of the functions it calls (name-resolved)
	named  map[string]bool
	uses   map[string]bool // every identifier and selector its body names
	decl   *ast.FuncDecl
	// named holds the name of every call it makes: F of F(...), M of
	// x.M(...), whether or not the callee is declared in the project (an
	// interface method, a func-valued field or parameter, the standard
	// library).
}

// callGraph is the name-based static call graph of a set of Go files,
// with what the hop notation needs besides: method sets, interfaces and
// the places a function is stored as a value.
type callGraph struct {
	funcs        map[string]*funcNode
	files        map[string]bool                       // Go files, slash paths
	methods      map[string]map[string]bool            // "dir.Type" → method names (declared and from embedded fields)
	embeds       map[string][]string                   // "dir.Type" → embedded types ("dir.T" or "importpath.T")
	ifaces       map[string][]string                   // "dir.I" or "importpath.I" → method names (embedded interfaces expanded lazily)
	ifEmbed      map[string][]string                   // interface → embedded interfaces
	binds        map[string][]string                   // value name F → expressions stored as F (keys and names of functions named in them)
	imports      map[string]map[string]string          // file → import name → import path
	calledW      map[string]map[string]map[string]bool // callee key → param name → names of functions passed for it
	stdlib       map[string]bool                       // standard-library package paths parsed for interfaces
	fields       map[string]map[string]string          // "dir.T" → field name → its type's key
	results      map[string]string                     // function key → its first result's type key
	methodsNamed map[string]map[string][]string        // dir → method name → keys
	projectDirs  map[string]bool
}

// buildCallGraph parses the named files (slash paths from root; src, when
// not nil, gives their contents instead of the file system).
func buildCallGraph(root string, paths []string, src map[string]string) (*callGraph, error) {
	g := &callGraph{
		funcs:   map[string]*funcNode{},
		files:   map[string]bool{},
		methods: map[string]map[string]bool{},
		embeds:  map[string][]string{},
		ifaces:  map[string][]string{},
		ifEmbed: map[string][]string{},
		binds:   map[string][]string{},
		imports: map[string]map[string]string{},
		calledW: map[string]map[string]map[string]bool{},
		stdlib:  map[string]bool{},
		fields:  map[string]map[string]string{},
		results: map[string]string{},
	}
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	for _, p := range paths {
		var text any
		if src != nil {
			text = src[p]
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(p)), text, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		parsed[p] = f
		g.files[p] = true
	}
	// First pass: declarations, so that calls can be resolved.
	funcsIn := map[string]map[string]bool{} // dir → function names
	methodsIn := map[string]map[string][]string{}
	g.methodsNamed = methodsIn
	for p, f := range parsed {
		dir := path.Dir(p)
		imps := map[string]string{}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			name := path.Base(ip)
			if im.Name != nil {
				name = im.Name.Name
			}
			imps[name] = ip
		}
		g.imports[p] = imps
		if funcsIn[dir] == nil {
			funcsIn[dir], methodsIn[dir] = map[string]bool{}, map[string][]string{}
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				n := &funcNode{file: p, named: map[string]bool{}, uses: map[string]bool{}, decl: decl}
				for _, fld := range decl.Type.Params.List {
					for _, name := range fld.Names {
						n.params = append(n.params, name.Name)
					}
					if len(fld.Names) == 0 {
						n.params = append(n.params, "_")
					}
				}
				if decl.Recv == nil {
					n.key = dir + "." + decl.Name.Name
					funcsIn[dir][decl.Name.Name] = true
				} else {
					typ := dir + "." + recvName(decl.Recv.List[0].Type)
					n.key = typ + "." + decl.Name.Name
					methodsIn[dir][decl.Name.Name] = append(methodsIn[dir][decl.Name.Name], n.key)
					if g.methods[typ] == nil {
						g.methods[typ] = map[string]bool{}
					}
					g.methods[typ][decl.Name.Name] = true
				}
				if res := decl.Type.Results; res != nil && len(res.List) > 0 {
					g.results[n.key] = typeRef(res.List[0].Type, dir, imps)
				}
				g.funcs[n.key] = n
			case *ast.GenDecl:
				for _, s := range decl.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					typ := dir + "." + ts.Name.Name
					switch t := ts.Type.(type) {
					case *ast.StructType:
						if g.fields[typ] == nil {
							g.fields[typ] = map[string]string{}
						}
						for _, fld := range t.Fields.List {
							ref := typeRef(fld.Type, dir, imps)
							if len(fld.Names) == 0 {
								g.embeds[typ] = append(g.embeds[typ], ref)
								g.fields[typ][ref[strings.LastIndexByte(ref, '.')+1:]] = ref
							}
							for _, n := range fld.Names {
								g.fields[typ][n.Name] = ref
							}
						}
					case *ast.InterfaceType:
						g.ifaces[typ] = []string{}
						for _, m := range t.Methods.List {
							if len(m.Names) == 0 {
								g.ifEmbed[typ] = append(g.ifEmbed[typ], typeRef(m.Type, dir, imps))
							}
							for _, name := range m.Names {
								g.ifaces[typ] = append(g.ifaces[typ], name.Name)
							}
						}
					}
				}
			}
		}
	}
	// Second pass: calls and bindings.
	for p, f := range parsed {
		dir := path.Dir(p)
		imps := g.imports[p]
		// refs names the project functions an expression stores: a
		// function or method value, or the callees of a function literal.
		refs := func(e ast.Expr) []string {
			var out []string
			ast.Inspect(e, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					out = append(out, n.Name)
				case *ast.SelectorExpr:
					out = append(out, n.Sel.Name)
				}
				return true
			})
			return out
		}
		bind := func(name string, e ast.Expr) {
			g.binds[name] = append(g.binds[name], refs(e)...)
		}
		for _, decl := range f.Decls {
			fd, isFunc := decl.(*ast.FuncDecl)
			var n *funcNode
			if isFunc {
				if fd.Recv == nil {
					n = g.funcs[dir+"."+fd.Name.Name]
				} else {
					n = g.funcs[dir+"."+recvName(fd.Recv.List[0].Type)+"."+fd.Name.Name]
				}
			}
			// env holds the types known of the function's receiver,
			// parameters and locals (declared with a type, a composite
			// literal or a call whose result type is known).
			env := map[string]string{}
			var typeOf func(e ast.Expr) string
			typeOf = func(e ast.Expr) string {
				switch e := e.(type) {
				case *ast.Ident:
					return env[e.Name]
				case *ast.ParenExpr:
					return typeOf(e.X)
				case *ast.StarExpr:
					return typeOf(e.X)
				case *ast.UnaryExpr:
					return typeOf(e.X)
				case *ast.CompositeLit:
					return typeRef(e.Type, dir, imps)
				case *ast.TypeAssertExpr:
					if e.Type != nil {
						return typeRef(e.Type, dir, imps)
					}
				case *ast.SelectorExpr:
					if t := typeOf(e.X); t != "" {
						return g.fieldType(t, e.Sel.Name)
					}
				case *ast.CallExpr:
					if ks, ok := g.resolveCall(e, dir, dirs(imps, dir), imps, typeOf); ok && len(ks) == 1 {
						return g.results[ks[0]]
					}
					if id, ok := e.Fun.(*ast.Ident); ok && (id.Name == "new") && len(e.Args) == 1 {
						return typeRef(e.Args[0], dir, imps)
					}
				}
				return ""
			}
			addFields := func(fl *ast.FieldList) {
				if fl == nil {
					return
				}
				for _, fld := range fl.List {
					for _, name := range fld.Names {
						env[name.Name] = typeRef(fld.Type, dir, imps)
					}
				}
			}
			if isFunc {
				addFields(fd.Recv)
				addFields(fd.Type.Params)
			}
			ast.Inspect(decl, func(node ast.Node) bool {
				switch x := node.(type) {
				case *ast.FuncLit:
					addFields(x.Type.Params)
				case *ast.ValueSpec:
					for _, name := range x.Names {
						if x.Type != nil {
							env[name.Name] = typeRef(x.Type, dir, imps)
						} else if len(x.Values) == len(x.Names) {
							env[name.Name] = typeOf(x.Values[0])
						}
					}
				case *ast.AssignStmt:
					if x.Tok == token.DEFINE {
						for i, l := range x.Lhs {
							id, ok := l.(*ast.Ident)
							if !ok {
								continue
							}
							if len(x.Rhs) == len(x.Lhs) {
								env[id.Name] = typeOf(x.Rhs[i])
							} else if i == 0 && len(x.Rhs) == 1 {
								env[id.Name] = typeOf(x.Rhs[0])
							}
						}
					}
				}
				if n != nil {
					switch x := node.(type) {
					case *ast.Ident:
						n.uses[x.Name] = true
					case *ast.SelectorExpr:
						n.uses[x.Sel.Name] = true
					}
				}
				switch x := node.(type) {
				case *ast.KeyValueExpr:
					switch k := x.Key.(type) {
					case *ast.Ident:
						bind(k.Name, x.Value)
					case *ast.BasicLit:
						if s, err := strconv.Unquote(k.Value); err == nil {
							bind(s, x.Value)
						}
					}
				case *ast.AssignStmt:
					if len(x.Lhs) == len(x.Rhs) {
						for i, l := range x.Lhs {
							switch l := l.(type) {
							case *ast.SelectorExpr:
								bind(l.Sel.Name, x.Rhs[i])
							case *ast.Ident:
								bind(l.Name, x.Rhs[i])
							}
						}
					}
				case *ast.CallExpr:
					if n == nil {
						return true
					}
					switch fn := callee(x).(type) {
					case *ast.Ident:
						n.named[fn.Name] = true
					case *ast.SelectorExpr:
						n.named[fn.Sel.Name] = true
					}
					callees, _ := g.resolveCall(x, dir, dirs(imps, dir), imps, typeOf)
					n.calls = append(n.calls, callees...)
					// Arguments bound to the callees' parameters.
					for _, c := range callees {
						cn := g.funcs[c]
						for i, a := range x.Args {
							if i >= len(cn.params) {
								break
							}
							if g.calledW[c] == nil {
								g.calledW[c] = map[string]map[string]bool{}
							}
							pn := cn.params[i]
							if g.calledW[c][pn] == nil {
								g.calledW[c][pn] = map[string]bool{}
							}
							for _, r := range refs(a) {
								g.calledW[c][pn][r] = true
							}
						}
					}
				}
				return true
			})
		}
	}
	return g, nil
}

// dirs are the project packages a file can reach methods of: its own and
// those it imports.
func dirs(imps map[string]string, dir string) []string {
	out := []string{dir}
	for _, ip := range imps {
		if d, ok := strings.CutPrefix(ip, modulePath+"/"); ok {
			out = append(out, d)
		}
	}
	return out
}

// fieldType is the type of field f of type t ("dir.T"), promoted fields
// of embedded types included.
func (g *callGraph) fieldType(t, f string) string {
	if ft, ok := g.fields[t][f]; ok {
		return ft
	}
	for _, e := range g.embeds[t] {
		if ft := g.fieldType(e, f); ft != "" {
			return ft
		}
	}
	return ""
}

// methodKey is the key of method m of type t, declared or promoted from
// an embedded project type; "" when t has none.
func (g *callGraph) methodKey(t, m string) string {
	if n := g.funcs[t+"."+m]; n != nil && n.decl.Recv != nil {
		return t + "." + m
	}
	for _, e := range g.embeds[t] {
		if k := g.methodKey(e, m); k != "" {
			return k
		}
	}
	return ""
}

// resolveCall returns the project functions a call may reach: F of a
// project package; the method of the receiver's type when that type is
// known (none when it is an interface or another module's type: such a
// call is followed only through "via"); else every method of that name in
// the packages the caller's file can reach. ok is false for a call of
// nothing the project declares.
func (g *callGraph) resolveCall(x *ast.CallExpr, dir string, dirs []string, imps map[string]string, typeOf func(ast.Expr) string) ([]string, bool) {
	switch fn := callee(x).(type) {
	case *ast.Ident:
		if n := g.funcs[dir+"."+fn.Name]; n != nil && n.decl.Recv == nil {
			return []string{dir + "." + fn.Name}, true
		}
	case *ast.SelectorExpr:
		if id, ok := fn.X.(*ast.Ident); ok {
			if ip, isPkg := imps[id.Name]; isPkg {
				if d, ok := strings.CutPrefix(ip, modulePath+"/"); ok {
					if n := g.funcs[d+"."+fn.Sel.Name]; n != nil && n.decl.Recv == nil {
						return []string{d + "." + fn.Sel.Name}, true
					}
				}
				return nil, false
			}
		}
		if t := typeOf(fn.X); t != "" {
			if k := g.methodKey(t, fn.Sel.Name); k != "" {
				return []string{k}, true
			}
			if g.isTypeKnown(t) {
				return nil, false
			}
		}
		var out []string
		for _, d := range dirs {
			out = append(out, g.methodsNamed[d][fn.Sel.Name]...)
		}
		return out, len(out) > 0
	}
	return nil, false
}

// isTypeKnown reports whether t is a type the resolver can speak for: a
// project struct or interface, or a type of another module (whose
// methods are not the project's).
func (g *callGraph) isTypeKnown(t string) bool {
	if _, ok := g.fields[t]; ok {
		return true
	}
	if _, ok := g.ifaces[t]; ok {
		return true
	}
	i := strings.LastIndexByte(t, '.')
	return i > 0 && !g.isProjectDir(t[:i])
}

// typeRef is the key of a type expression: "dir.T" for a project type,
// "importpath.T" for another package's.
func typeRef(e ast.Expr, dir string, imps map[string]string) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeRef(e.X, dir, imps)
	case *ast.Ident:
		return dir + "." + e.Name
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			ip := imps[id.Name]
			if d, ok := strings.CutPrefix(ip, modulePath+"/"); ok {
				return d + "." + e.Sel.Name
			}
			return ip + "." + e.Sel.Name
		}
	}
	return ""
}

// loadStdlib parses the interfaces of a package outside the project (the
// standard library or a required module), once.
func (g *callGraph) loadStdlib(ip string) {
	if g.stdlib[ip] {
		return
	}
	g.stdlib[ip] = true
	dir := filepath.Join(runtime.GOROOT(), "src", filepath.FromSlash(ip))
	ents, err := os.ReadDir(dir)
	if err != nil {
		// A package of a module go.mod requires, in the module cache.
		if dir = moduleDir(ip); dir == "" {
			return
		}
		if ents, err = os.ReadDir(dir); err != nil {
			return
		}
	}
	fset := token.NewFileSet()
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		imps := map[string]string{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imps[path.Base(p)] = p
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range gd.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok {
					continue
				}
				it, ok := ts.Type.(*ast.InterfaceType)
				if !ok {
					continue
				}
				key := ip + "." + ts.Name.Name
				g.ifaces[key] = []string{}
				for _, m := range it.Methods.List {
					if len(m.Names) == 0 {
						ref := typeRef(m.Type, ip, imps)
						g.ifEmbed[key] = append(g.ifEmbed[key], ref)
					}
					for _, n := range m.Names {
						g.ifaces[key] = append(g.ifaces[key], n.Name)
					}
				}
			}
		}
	}
}

// moduleDir is the directory of package ip of a module the project's
// go.mod requires, in the module cache; "" when it is not there.
func moduleDir(ip string) string {
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return ""
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			return ""
		}
		cache = strings.TrimSpace(string(out))
	}
	best, version := "", ""
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && (ip == f[0] || strings.HasPrefix(ip, f[0]+"/")) && len(f[0]) > len(best) {
			best, version = f[0], f[1]
		}
	}
	if best == "" || strings.ToLower(best) != best {
		return "" // no such requirement, or a path the cache case-encodes
	}
	return filepath.Join(cache, filepath.FromSlash(best)+"@"+version, filepath.FromSlash(strings.TrimPrefix(ip, best)))
}

// ifaceMethods is the method set of an interface ("dir.I" or
// "importpath.I"); ok is false when it is unknown.
func (g *callGraph) ifaceMethods(key string) ([]string, bool) {
	if _, ok := g.ifaces[key]; !ok {
		if i := strings.LastIndexByte(key, '.'); i > 0 && !g.isProjectDir(key[:i]) {
			g.loadStdlib(key[:i])
		}
	}
	ms, ok := g.ifaces[key]
	if !ok {
		return nil, false
	}
	out := append([]string(nil), ms...)
	for _, e := range g.ifEmbed[key] {
		more, ok := g.ifaceMethods(e)
		if !ok {
			return nil, false
		}
		out = append(out, more...)
	}
	return out, true
}

func (g *callGraph) isProjectDir(dir string) bool {
	if g.projectDirs == nil {
		g.projectDirs = map[string]bool{}
		for f := range g.files {
			g.projectDirs[path.Dir(f)] = true
		}
	}
	return g.projectDirs[dir]
}

// hasMethod reports whether type typ ("dir.T") has method m, declared or
// promoted from an embedded field (a project type or an interface).
func (g *callGraph) hasMethod(typ, m string) bool {
	if g.methods[typ][m] {
		return true
	}
	for _, e := range g.embeds[typ] {
		if g.hasMethod(e, m) {
			return true
		}
		if ms, ok := g.ifaceMethods(e); ok {
			for _, x := range ms {
				if x == m {
					return true
				}
			}
		}
	}
	return false
}

// reach returns the functions reachable from key by at most depth static
// calls, with their distance (key itself at 0).
func (g *callGraph) reach(key string, depth int) map[string]int {
	dist := map[string]int{key: 0}
	frontier := []string{key}
	for d := 1; d <= depth; d++ {
		var next []string
		for _, k := range frontier {
			n := g.funcs[k]
			if n == nil {
				continue
			}
			for _, c := range n.calls {
				if _, seen := dist[c]; !seen {
					dist[c] = d
					next = append(next, c)
				}
			}
		}
		frontier = next
	}
	return dist
}

// callsNamed reports whether a function within depth-1 static calls of
// key makes a call named name (so that the named call is at most depth
// calls from key).
func (g *callGraph) callsNamed(key, name string, depth int) bool {
	for k := range g.reach(key, depth-1) {
		if n := g.funcs[k]; n != nil && n.named[name] {
			return true
		}
	}
	return false
}

// hop is one line of a hop list.
type hop struct {
	line  int    // in the document, from 1
	file  string // slash path from the root
	name  string // "Func" or "Type.Method"
	from  string // the earlier hop's name it is reached from ("" for the previous hop)
	iface string // via interface: the interface ("pkg.I")
	thru  string // via interface … through: the call that hands the implementation on
	fn    string // via func: the func value's name
	table string // via table: the variable holding the functions
}

func (h hop) String() string { return h.file + " " + h.name }

var (
	hopLine   = regexp.MustCompile("^\\d+\\. `([\\w./-]+\\.go)` `([A-Za-z_][\\w.]*)`(?: \\(((?:from|via) [^)]*)\\))?")
	numbered  = regexp.MustCompile(`^\d+\. `)
	fromRe    = regexp.MustCompile("^from `([\\w.]+)`$")
	ifaceRe   = regexp.MustCompile("^via interface `([\\w./]+)`(?: through `(\\w+)`)?$")
	funcValRe = regexp.MustCompile("^via func `(\\w+)`$")
	tableRe   = regexp.MustCompile("^via table `(\\w+)`$")
)

// parseHops reads the hop lists of a Markdown document: in each "## "
// section, the numbered items that begin with "`file.go` `Name`". A
// section with one such item is a hop list, and every numbered item in it
// must be a hop.
func parseHops(doc string) (lists map[string][]hop, errs []string) {
	lists = map[string][]hop{}
	section := ""
	var items []string // numbered items of the section, for the check
	var lines []int
	flush := func() {
		if len(lists[section]) > 0 {
			for i, it := range items {
				if !hopLine.MatchString(it) {
					errs = append(errs, fmt.Sprintf("line %d: a numbered item of the hop list %q is not a hop (want \"N. `file.go` `Name` …\")", lines[i], section))
				}
			}
		}
		items, lines = nil, nil
	}
	for i, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "## ") {
			flush()
			section = strings.TrimPrefix(l, "## ")
			continue
		}
		if !numbered.MatchString(l) {
			continue
		}
		items, lines = append(items, l), append(lines, i+1)
		m := hopLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		h := hop{line: i + 1, file: m[1], name: m[2]}
		if m[3] != "" {
			for _, clause := range strings.Split(m[3], ", ") {
				switch {
				case fromRe.MatchString(clause):
					h.from = fromRe.FindStringSubmatch(clause)[1]
				case ifaceRe.MatchString(clause):
					sm := ifaceRe.FindStringSubmatch(clause)
					h.iface, h.thru = sm[1], sm[2]
				case funcValRe.MatchString(clause):
					h.fn = funcValRe.FindStringSubmatch(clause)[1]
				case tableRe.MatchString(clause):
					h.table = tableRe.FindStringSubmatch(clause)[1]
				default:
					errs = append(errs, fmt.Sprintf("line %d: %q is not hop notation (from `Name`, via interface `pkg.I` [through `Call`], via func `F`, via table `T`)", i+1, clause))
				}
			}
		}
		lists[section] = append(lists[section], h)
	}
	flush()
	return lists, errs
}

// checkHops checks one hop list against g and returns what is wrong.
func (g *callGraph) checkHops(list []hop) []string {
	var errs []string
	keyOf := func(h hop) (string, bool) {
		if !g.files[h.file] {
			errs = append(errs, fmt.Sprintf("line %d: %s does not exist", h.line, h.file))
			return "", false
		}
		k := path.Dir(h.file) + "." + h.name
		if n := g.funcs[k]; n == nil || n.file != h.file {
			errs = append(errs, fmt.Sprintf("line %d: %s declares no function %s", h.line, h.file, h.name))
			return "", false
		}
		return k, true
	}
	keys := make([]string, len(list))
	okAt := make([]bool, len(list))
	for i, h := range list {
		keys[i], okAt[i] = keyOf(h)
	}
	for i := 1; i < len(list); i++ {
		h := list[i]
		if !okAt[i] {
			continue
		}
		prev := i - 1
		if h.from != "" {
			prev = -1
			for j := i - 1; j >= 0; j-- {
				if list[j].name == h.from || strings.HasSuffix(list[j].name, "."+h.from) {
					prev = j
					break
				}
			}
			if prev < 0 {
				errs = append(errs, fmt.Sprintf("line %d: %s is reached from %s, which is no earlier hop of the list", h.line, h, h.from))
				continue
			}
		}
		if !okAt[prev] {
			continue
		}
		p, k := list[prev], keys[i]
		method := h.name[strings.LastIndexByte(h.name, '.')+1:]
		switch {
		case h.iface != "":
			if !strings.Contains(h.name, ".") {
				errs = append(errs, fmt.Sprintf("line %d: %s is reached via interface %s but is no method", h.line, h, h.iface))
				continue
			}
			ifKey, ok := g.resolveIface(h.iface, h.file)
			ms, known := g.ifaceMethods(ifKey)
			if !ok || !known {
				errs = append(errs, fmt.Sprintf("line %d: interface %s is not declared", h.line, h.iface))
				continue
			}
			typ := strings.TrimSuffix(k, "."+method)
			declares := false
			for _, m := range ms {
				if m == method {
					declares = true
				}
				if !g.hasMethod(typ, m) {
					errs = append(errs, fmt.Sprintf("line %d: %s does not implement %s: no method %s", h.line, typ, h.iface, m))
				}
			}
			if !declares {
				errs = append(errs, fmt.Sprintf("line %d: interface %s has no method %s", h.line, h.iface, method))
			}
			call := method
			if h.thru != "" {
				call = h.thru
			}
			if !g.callsNamed(keys[prev], call, maxHopDepth) {
				errs = append(errs, fmt.Sprintf("line %d: %s makes no call named %s within %d calls, so it does not reach %s via %s", h.line, p, call, maxHopDepth, h, h.iface))
			}
		case h.fn != "":
			if !g.callsNamed(keys[prev], h.fn, maxHopDepth) {
				errs = append(errs, fmt.Sprintf("line %d: %s makes no call of a func value %s within %d calls", h.line, p, h.fn, maxHopDepth))
			}
			if !g.boundAs(h.fn, method, keys[prev]) {
				errs = append(errs, fmt.Sprintf("line %d: %s is never stored as %s (a field, a key, an assignment or an argument for a parameter %s)", h.line, h, h.fn, h.fn))
			}
		case h.table != "":
			uses := false
			for f := range g.reach(keys[prev], maxHopDepth-1) {
				if n := g.funcs[f]; n != nil && n.uses[h.table] {
					uses = true
				}
			}
			if !uses {
				errs = append(errs, fmt.Sprintf("line %d: %s does not look %s up within %d calls", h.line, p, h.table, maxHopDepth))
			}
			if !g.boundAs(h.table, method, "") {
				errs = append(errs, fmt.Sprintf("line %d: %s is not stored in %s", h.line, h, h.table))
			}
		default:
			if d, ok := g.reach(keys[prev], maxHopDepth)[k]; !ok || d == 0 {
				errs = append(errs, fmt.Sprintf("line %d: %s does not call %s within %d static calls", h.line, p, h, maxHopDepth))
			}
		}
	}
	return errs
}

// resolveIface is the key of an interface named "pkg.I" (a project
// package's name or a standard-library package's last element) or "I" (in
// the hop's own package).
func (g *callGraph) resolveIface(name, file string) (string, bool) {
	pkg, iface, ok := strings.Cut(name, ".")
	if !ok {
		return path.Dir(file) + "." + name, true
	}
	// A project package whose directory ends in pkg.
	var dirs []string
	for f := range g.files {
		if d := path.Dir(f); path.Base(d) == pkg {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if _, ok := g.ifaces[d+"."+iface]; ok {
			return d + "." + iface, true
		}
	}
	// An imported package of that name.
	for _, imps := range g.imports {
		if ip, ok := imps[pkg]; ok && !strings.HasPrefix(ip, modulePath) {
			return ip + "." + iface, true
		}
	}
	return "", false
}

// boundAs reports whether a function named name is stored as the func
// value fn: in a composite literal's field or key fn, assigned to fn, or
// passed for a parameter fn of caller; or stored as a value that is
// itself stored as fn (s.check = s.checkHeaders; CheckHeaders: s.check).
func (g *callGraph) boundAs(fn, name, caller string) bool {
	if g.calledW[caller][fn][name] {
		return true
	}
	for _, r := range g.binds[fn] {
		if r == name {
			return true
		}
	}
	for _, r := range g.binds[fn] {
		for _, r2 := range g.binds[r] {
			if r2 == name && r != fn {
				return true
			}
		}
	}
	return false
}

// repoGoFiles lists the project's non-test Go files.
func repoGoFiles(t testing.TB) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if n := e.Name(); p != "." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			out = append(out, filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestArchitectureHops checks that every hop list of ARCHITECTURE.md is
// adjacent in the code.
func TestArchitectureHops(t *testing.T) {
	g, err := buildCallGraph(".", repoGoFiles(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	lists, errs := parseHops(string(doc))
	for _, e := range errs {
		t.Errorf("ARCHITECTURE.md %s", e)
	}
	if len(lists) < 3 {
		t.Fatalf("ARCHITECTURE.md has %d hop lists, want the stdio, HTTP and shared ones", len(lists))
	}
	for section, list := range lists {
		if len(list) < 5 {
			t.Errorf("ARCHITECTURE.md hop list %q has %d hops", section, len(list))
		}
		for _, e := range g.checkHops(list) {
			t.Errorf("ARCHITECTURE.md %s", e)
		}
	}
	if testing.Verbose() {
		// What a tools/call crosses over each transport: its list and
		// the shared one, from Server.Handle to the guest and back.
		shared := lists["From `Server.Handle` to the guest and back"]
		for section, list := range lists {
			if strings.HasPrefix(section, "From ") {
				continue
			}
			files, pkgs := map[string]bool{}, map[string]bool{}
			n := len(list)
			for _, h := range list {
				files[h.file], pkgs[path.Dir(h.file)] = true, true
			}
			for _, h := range shared {
				// The shared list ends on both transports' streams.
				if d := path.Dir(h.file); strings.HasPrefix(d, "transport/") && !pkgs[d] {
					continue
				}
				n++
				files[h.file], pkgs[path.Dir(h.file)] = true, true
			}
			names := make([]string, 0, len(pkgs))
			for p := range pkgs {
				names = append(names, p)
			}
			sort.Strings(names)
			t.Logf("%s, with the shared list: %d hops, %d files, %d packages (%s)", section, n, len(files), len(pkgs), strings.Join(names, " "))
		}
	}
}

// hopFixture is a small project for the checker's own test.
var hopFixture = map[string]string{
	"p/p.go": `package p

import "io"

type Stream interface{ Send(b []byte) error }

type T struct {
	s    Stream
	hook func() error
	w    io.Writer
}

func (t *T) Start() { t.step(); t.far1() }

func (t *T) step() error {
	t.s.Send(nil)
	if t.hook != nil {
		return t.hook()
	}
	h := table["x"]
	h(t)
	return run(t, func() error { return t.last() })
}

func run(t *T, call func() error) error { return call() }

func (t *T) last() error { return nil }

func (t *T) far1() { t.far2() }
func (t *T) far2() { t.far3() }
func (t *T) far3() { t.far4() }
func (t *T) far4() {}

func (t *T) lonely() {}

var table map[string]func(*T)

func init() { table = map[string]func(*T){"x": (*T).tabled} }

func (t *T) tabled() {}

type sink struct{}

func (sink) Send(b []byte) error { return nil }

type notSink struct{}

func (notSink) Other() {}

func New() *T {
	t := &T{}
	t.hook = t.hooked
	return t
}

func (t *T) hooked() error { return nil }
`,
}

func TestHopCheckerFailsOnBrokenPair(t *testing.T) {
	var paths []string
	for p := range hopFixture {
		paths = append(paths, p)
	}
	g, err := buildCallGraph(".", paths, hopFixture)
	if err != nil {
		t.Fatal(err)
	}
	check := func(doc string) []string {
		lists, errs := parseHops("## hops\n\n" + doc)
		for _, l := range lists {
			errs = append(errs, g.checkHops(l)...)
		}
		return errs
	}
	good := "1. `p/p.go` `T.Start`\n" +
		"2. `p/p.go` `T.step`\n" +
		"3. `p/p.go` `sink.Send` (via interface `Stream`)\n" +
		"4. `p/p.go` `T.hooked` (from `T.step`, via func `hook`)\n" +
		"5. `p/p.go` `T.tabled` (from `T.step`, via table `table`)\n" +
		"6. `p/p.go` `run` (from `T.step`)\n" +
		"7. `p/p.go` `T.last` (via func `call`)\n" +
		"8. `p/p.go` `T.far3` (from `T.Start`)\n"
	if errs := check(good); len(errs) > 0 {
		t.Fatalf("a true hop list fails: %q", errs)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"swapped", "1. `p/p.go` `T.step`\n2. `p/p.go` `T.Start`\n", "does not call"},
		{"unconnected", "1. `p/p.go` `T.Start`\n2. `p/p.go` `T.lonely`\n", "does not call"},
		{"too deep", "1. `p/p.go` `T.Start`\n2. `p/p.go` `T.far4`\n", "within 3 static calls"},
		{"no such function", "1. `p/p.go` `T.Start`\n2. `p/p.go` `T.gone`\n", "declares no function"},
		{"wrong file", "1. `p/p.go` `T.Start`\n2. `p/q.go` `T.step`\n", "does not exist"},
		{"not an implementation", "1. `p/p.go` `T.step`\n2. `p/p.go` `notSink.Other` (via interface `Stream`)\n", "does not implement"},
		{"interface not called", "1. `p/p.go` `T.last`\n2. `p/p.go` `sink.Send` (via interface `Stream`)\n", "makes no call named Send"},
		{"func value not stored", "1. `p/p.go` `T.step`\n2. `p/p.go` `T.lonely` (via func `hook`)\n", "never stored as hook"},
		{"func value not called", "1. `p/p.go` `T.last`\n2. `p/p.go` `T.hooked` (via func `hook`)\n", "no call of a func value hook"},
		{"not in the table", "1. `p/p.go` `T.step`\n2. `p/p.go` `T.lonely` (via table `table`)\n", "not stored in table"},
		{"from no earlier hop", "1. `p/p.go` `T.Start`\n2. `p/p.go` `T.step` (from `T.nothing`)\n", "no earlier hop"},
		{"bad notation", "1. `p/p.go` `T.Start`\n2. `p/p.go` `T.step` (via magic)\n", "not hop notation"},
		{"not a hop", "1. `p/p.go` `T.Start`\n2. T.step, in words\n", "is not a hop"},
	} {
		errs := check(tc.doc)
		if !strings.Contains(strings.Join(errs, "\n"), tc.want) {
			t.Errorf("%s: the checker says %q, want an error containing %q", tc.name, errs, tc.want)
		}
	}
}

// callee is the function expression a call names, without the type
// arguments of a generic instantiation and the parentheses around it.
func callee(x *ast.CallExpr) ast.Expr {
	fun := x.Fun
	for {
		switch f := fun.(type) {
		case *ast.IndexExpr:
			fun = f.X
		case *ast.IndexListExpr:
			fun = f.X
		case *ast.ParenExpr:
			fun = f.X
		default:
			return fun
		}
	}
}
