package protocol

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// pulledModule is a fakeModule installed from a registry.
type pulledModule struct{ *fakeModule }

func (pulledModule) Pulled() bool { return true }

func toolsModule(name string, tools ...string) *fakeModule {
	d := &abi.Description{}
	for _, t := range tools {
		d.Tools = append(d.Tools, abi.Tool{Name: t, Description: "d"})
	}
	return &fakeModule{name: name, desc: d}
}

func ownerOf(t *testing.T, c *Catalog, tool string) string {
	t.Helper()
	m, ok := c.Tool(tool)
	if !ok {
		return ""
	}
	return m.Name()
}

func served(c *Catalog, name string) bool {
	for _, m := range c.Modules() {
		if m.Name() == name {
			return true
		}
	}
	return false
}

// A name served stays with its module when a module whose name sorts
// first arrives declaring it; the newcomer is refused whole.
func TestCatalogIncumbentKeepsNameOnReload(t *testing.T) {
	b := toolsModule("b", "hello")
	first, _ := NewCatalog([]Module{b}, quietLog())
	a := toolsModule("a", "hello", "other")
	next, conflicts := NewCatalogOver(first, []Module{a, b}, nil, quietLog())
	if got := ownerOf(t, next, "hello"); got != "b" {
		t.Fatalf("hello served by %q, want the incumbent b", got)
	}
	if _, ok := next.Tool("other"); ok || served(next, "a") {
		t.Fatal("the refused module is half served")
	}
	if len(conflicts) != 1 || conflicts[0] != (Conflict{Kind: "tool", Name: "hello", Kept: "b", Dropped: "a"}) {
		t.Fatalf("conflicts = %+v", conflicts)
	}
	// Once b stops declaring it, a may have it.
	b2 := toolsModule("b", "bye")
	last, conflicts := NewCatalogOver(next, []Module{a, b2}, nil, quietLog())
	if got := ownerOf(t, last, "hello"); got != "a" || len(conflicts) != 0 {
		t.Fatalf("hello served by %q (conflicts %+v), want a", got, conflicts)
	}
}

// At the first load a hand-placed module wins over a pulled one whatever
// their names, and the order of mods does not matter.
func TestCatalogHandPlacedBeatsPulled(t *testing.T) {
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		mods := []Module{pulledModule{toolsModule("aaa", "hello")}, toolsModule("zzz", "hello")}
		c, conflicts := NewCatalog([]Module{mods[order[0]], mods[order[1]]}, quietLog())
		if got := ownerOf(t, c, "hello"); got != "zzz" {
			t.Fatalf("hello served by %q, want the hand-placed zzz", got)
		}
		if len(conflicts) != 1 || conflicts[0].Dropped != "aaa" {
			t.Fatalf("conflicts = %+v", conflicts)
		}
	}
}

// An update of a served module that renames its tool onto a name another
// module serves is refused: the other keeps it, even when the updated
// module is hand-placed and its name sorts first.
func TestCatalogUpdateRenamingOntoServedNameRefused(t *testing.T) {
	for _, pulled := range []bool{true, false} {
		var v1, v2 Module = toolsModule("a", "a_tool"), toolsModule("a", "small_hello")
		if pulled {
			v1, v2 = pulledModule{v1.(*fakeModule)}, pulledModule{v2.(*fakeModule)}
		}
		small := toolsModule("small", "small_hello")
		first, _ := NewCatalog([]Module{v1, small}, quietLog())
		next, conflicts := NewCatalogOver(first, []Module{v2, small}, nil, quietLog())
		if got := ownerOf(t, next, "small_hello"); got != "small" {
			t.Fatalf("pulled=%v: small_hello served by %q, want small", pulled, got)
		}
		if served(next, "a") || len(conflicts) != 1 || conflicts[0].Dropped != "a" {
			t.Fatalf("pulled=%v: a served=%v, conflicts %+v", pulled, served(next, "a"), conflicts)
		}
	}
}

// Prompts, resources and templates follow the same rule as tools.
func TestCatalogIncumbentKeepsEveryKindOfName(t *testing.T) {
	kinds := map[string]func(d *abi.Description){
		"prompt":   func(d *abi.Description) { d.Prompts = []abi.Prompt{{Name: "p"}} },
		"resource": func(d *abi.Description) { d.Resources = []abi.Resource{{URI: "file:///r", Name: "r"}} },
		"template": func(d *abi.Description) {
			d.ResourceTemplates = []abi.ResourceTemplate{{URITemplate: "file:///{x}", Name: "t"}}
		},
	}
	for kind, set := range kinds {
		mk := func(name string) *fakeModule {
			m := toolsModule(name)
			set(m.desc)
			return m
		}
		z := mk("z")
		first, _ := NewCatalog([]Module{z}, quietLog())
		_, conflicts := NewCatalogOver(first, []Module{mk("a"), z}, nil, quietLog())
		if len(conflicts) != 1 || conflicts[0].Kind != kind || conflicts[0].Kept != "z" || conflicts[0].Dropped != "a" {
			t.Fatalf("%s: conflicts = %+v", kind, conflicts)
		}
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The server's warnings reach a client only where it asked for logs at
// warning or lower: a legacy session after logging/setLevel, a listen
// stream whose request named a logLevel.
func TestWarnReachesClientsThatAskedForLogs(t *testing.T) {
	srv, _ := mrtrServer(t, Options{})
	sess := NewSession()
	var mu sync.Mutex
	got := map[string][]string{}
	collect := func(who string) func([]byte) {
		return func(m []byte) { mu.Lock(); got[who] = append(got[who], string(m)); mu.Unlock() }
	}
	defer srv.AddListener(&Listener{Session: sess, Tools: true, Send: collect("legacy")})()
	defer srv.AddListener(&Listener{SubscriptionID: []byte("5"), logLevel: levelWarning, Send: collect("listen")})()
	defer srv.AddListener(&Listener{SubscriptionID: []byte("6"), logLevel: levelNone, Send: collect("listen-nolog")})()
	handle(t, srv, sess, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	srv.Warn(map[string]string{"message": "first"}) // legacy: no setLevel yet
	handle(t, srv, sess, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}`, nil)
	srv.Warn(map[string]string{"message": "second"}) // legacy: error only
	handle(t, srv, sess, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"warning"}}`, nil)
	srv.Warn(map[string]string{"message": "third"})
	mu.Lock()
	defer mu.Unlock()
	want := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"wasmcp","data":{"message":"third"}}}`
	if l := got["legacy"]; len(l) != 1 || l[0] != want {
		t.Fatalf("legacy session got %q, want only %s", l, want)
	}
	if l := got["listen"]; len(l) != 3 || !strings.Contains(l[2], `"_meta":{"`+MetaSubscriptionID+`":5}`) || !strings.Contains(l[2], `"third"`) {
		t.Fatalf("listen stream got %q", l)
	}
	if l := got["listen-nolog"]; len(l) != 0 {
		t.Fatalf("listen stream without a logLevel got %q", l)
	}
}

// templateModule is a module declaring the URI templates tmpls.
func templateModule(name string, tmpls ...string) *fakeModule {
	m := toolsModule(name)
	for _, t := range tmpls {
		m.desc.ResourceTemplates = append(m.desc.ResourceTemplates, abi.ResourceTemplate{URITemplate: t, Name: t})
	}
	return m
}

// readOwner is the module a resources/read of uri goes to, or "".
func readOwner(c *Catalog, uri string) string {
	if e := c.templateFor(uri); e != nil {
		return e.mod.Name()
	}
	return ""
}

// A template spelled otherwise but matching the URIs another module's
// template serves (file:///docs/{a} beside file:///docs/{name}) is not the
// same name, so no conflict: but it must not take the reads the other
// serves, whatever its spelling sorts as. Hand-placed before pulled;
// incumbents before newcomers.
func TestCatalogOverlappingTemplateTakesNoReads(t *testing.T) {
	hand := templateModule("zzz", "file:///docs/{name}")
	pulled := pulledModule{templateModule("aaa", "file:///docs/{a}")}
	c, _ := NewCatalog([]Module{pulled, hand}, quietLog())
	if got := readOwner(c, "file:///docs/x"); got != "zzz" {
		t.Fatalf("file:///docs/x read by %q, want the hand-placed zzz", got)
	}
	// A newcomer (hand-placed too) over a served template.
	first, _ := NewCatalog([]Module{templateModule("b", "file:///docs/{name}")}, quietLog())
	next, _ := NewCatalogOver(first, []Module{templateModule("a", "file:///docs/{a}"), templateModule("b", "file:///docs/{name}")}, nil, quietLog())
	if got := readOwner(next, "file:///docs/x"); got != "b" {
		t.Fatalf("file:///docs/x read by %q after a reload, want the incumbent b", got)
	}
	// Only the module reads go to may say the URI changed.
	if next.serves(next.modules[0], "file:///docs/x") || !next.serves(next.modules[1], "file:///docs/x") {
		t.Fatalf("the shadowed template's module may notify of file:///docs/x")
	}
	// The list stays sorted by template.
	if len(next.templates) != 2 || next.templates[0].tmpl.URITemplate != "file:///docs/{a}" {
		t.Fatalf("templates listed out of order")
	}
}
